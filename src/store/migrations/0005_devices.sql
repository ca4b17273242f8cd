-- Devices and enrollment sessions (issue 5).

-- A session that a newer start replaced: its state becomes 'cancelled' and this names the newer
-- one, so POST .../enroll/status can answer `session: null` for it (DECISIONS.md).
ALTER TABLE enrollment_sessions ADD COLUMN superseded_by uuid;

-- One active session per device, even when two starts race.
CREATE UNIQUE INDEX enrollment_sessions_one_active ON enrollment_sessions (device_id)
  WHERE state IN ('pending', 'in_progress');

-- Registration codes are looked up by device when unlinked devices are swept.
CREATE INDEX registration_codes_device ON registration_codes (device_id);
