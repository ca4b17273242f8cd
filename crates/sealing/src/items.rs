//! Items laid end to end in one flat buffer, as the Node binding passes them (one typed array of
//! bytes and one of ends, instead of an array of buffers per item).

use std::ops::Range;

use crate::error::{BatchError, Buffer};

/// Item `i` is `bytes[ends[i - 1]..ends[i]]`; item 0 starts at 0. Bytes past the last end are
/// not read.
#[derive(Clone, Copy, Debug)]
pub struct Items<'a> {
    pub bytes: &'a [u8],
    pub ends: &'a [u32],
}

impl<'a> Items<'a> {
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// Item `index`'s range, or which end is out of order or past the buffer.
    fn range(&self, buffer: Buffer, index: usize) -> Result<Range<usize>, BatchError> {
        let start = if index == 0 {
            0
        } else {
            self.ends[index - 1] as usize
        };
        let end = self.ends[index] as usize;
        if start > end || end > self.bytes.len() {
            return Err(BatchError::EndOutOfOrder {
                buffer,
                item: index,
                end,
                length: self.bytes.len(),
            });
        }
        Ok(start..end)
    }

    /// Checks every item's range, so the work that follows cannot fail half-way.
    pub(crate) fn check(&self, buffer: Buffer) -> Result<(), BatchError> {
        (0..self.count()).try_for_each(|index| self.range(buffer, index).map(drop))
    }

    /// Item `index`'s range; only after [`Items::check`].
    pub(crate) fn checked_range(&self, index: usize) -> Range<usize> {
        let start = if index == 0 {
            0
        } else {
            self.ends[index - 1] as usize
        };
        start..self.ends[index] as usize
    }

    /// Item `index`'s bytes; only after [`Items::check`].
    pub(crate) fn item(&self, index: usize) -> &'a [u8] {
        &self.bytes[self.checked_range(index)]
    }
}
