//! A writer that cuts a serialised reply into shared buffers of a fixed size, so a large
//! reply is never one contiguous allocation, nor copied while it grows.

use std::io;

use bytes::Bytes;

/// The size of each buffer: large enough that a socket write takes many at once.
pub const CHUNK: usize = 64 * 1024;

#[derive(Default)]
pub struct Chunks {
    done: Vec<Bytes>,
    current: Vec<u8>,
}

impl Chunks {
    /// The reply as a chain of buffers.
    pub fn into_chain(mut self) -> Vec<Bytes> {
        if !self.current.is_empty() {
            self.done.push(Bytes::from(self.current));
        }
        self.done
    }
}

impl io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.current.len() + buf.len() > CHUNK && !self.current.is_empty() {
            let full = std::mem::replace(&mut self.current, Vec::with_capacity(CHUNK));
            self.done.push(Bytes::from(full));
        }
        if self.current.capacity() == 0 {
            self.current.reserve(CHUNK.max(buf.len()));
        }
        self.current.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_chain_holds_every_byte_in_order_in_bounded_buffers() {
        let mut chunks = Chunks::default();
        let mut expected = Vec::new();
        for i in 0..50_000u32 {
            let piece = format!("{i},");
            chunks.write_all(piece.as_bytes()).unwrap();
            expected.extend_from_slice(piece.as_bytes());
        }
        let chain = chunks.into_chain();
        assert!(chain.len() > 1);
        assert!(chain.iter().all(|c| c.len() <= CHUNK));
        assert_eq!(chain.concat(), expected);
    }
}
