-- The console's sign-in: one-time links (`palmvein console --sub`) and the sessions they open.
-- Only SHA-256 hashes of their secrets are stored. A link is used at most once (used_at set by the
-- one UPDATE that redeems it); a session ends at expires_at or when signed out (ended_at).
CREATE TABLE console_sign_in_links (
  id uuid PRIMARY KEY,
  secret_hash bytea NOT NULL,
  subject text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE TABLE console_sessions (
  id uuid PRIMARY KEY,
  secret_hash bytea NOT NULL,
  subject text NOT NULL,
  link_id uuid NOT NULL REFERENCES console_sign_in_links (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
