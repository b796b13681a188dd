//! Compressed replies without compressing per request: a reply is a chain of parts, cached
//! pieces (a project's serialised fragment) and fresh ones made per request (the envelope's
//! head with its `now`). A cached piece keeps each compressed form beside its bytes once
//! clients ask for it again: the first reply in an encoding compresses the piece for itself
//! alone, the second keeps what it made, and the form is dropped with the piece (at the
//! project's next write). So a form read once (one export in zstd, one view read once) costs
//! no memory after its reply, and one read again and again is made twice and then sent as
//! it is; a request compresses only its fresh parts, a few dozen bytes.
//!
//! How the forms join, as each encoding allows:
//! - gzip: browsers read only a gzip stream's first member (Chromium ignores what follows
//!   it), so a reply is one member. Each piece is a raw deflate segment ended by a sync
//!   flush (byte-aligned, not final); segments concatenate into one deflate stream, closed
//!   by an empty final block, and the member's CRC-32 is combined from the pieces' own.
//! - zstd: one frame per part. Concatenated frames are one valid zstd stream (RFC 8878,
//!   section 3), which libzstd decodes whole; Chromium's decoder stops after the first
//!   frame, so the interface prefers gzip when a client takes both (see `http::encoding`).
//! - brotli: streams cannot be concatenated, so it is not offered.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use bytes::Bytes;
use flate2::Compression;
use flate2::write::DeflateEncoder;

/// A reply's content coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Zstd,
}

impl Encoding {
    /// The `Content-Encoding` token.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Identity => "identity",
            Encoding::Gzip => "gzip",
            Encoding::Zstd => "zstd",
        }
    }
}

/// The gzip level of cached pieces (made once) and of fresh parts (made per request).
const GZIP_CACHED: u32 = 6;
const GZIP_FRESH: u32 = 1;
/// The zstd level of every frame: zstd's default, fast enough for the few fresh bytes of a
/// request, and one level means one context per thread. (Higher levels gain a few percent
/// on this JSON for much larger contexts.)
const ZSTD_LEVEL: i32 = 3;
/// Fresh gzip parts shorter than this go as a stored block: deflating a few dozen bytes
/// would cost more (readying a compressor clears about 200 KB of its tables) than it saves.
const STORED_BELOW: usize = 512;

/// Whether a form is made and kept: from the second reply in its encoding on (see the
/// module's note). One flag per encoding, gzip then zstd.
#[derive(Debug, Default)]
struct Asked([AtomicBool; 2]);

impl Asked {
    /// Notes that a reply asked for `encoding`; whether one did before.
    fn again(&self, encoding: Encoding) -> bool {
        let i = match encoding {
            Encoding::Zstd => 1,
            _ => 0,
        };
        self.0[i].swap(true, Ordering::Relaxed)
    }
}

/// A piece's deflate segment, with the CRC-32 and length of the bytes it holds.
#[derive(Debug, Clone)]
pub struct Deflated {
    pub segment: Bytes,
    pub crc: u32,
    pub len: u64,
}

/// Serialised bytes that are sent again and again, with their compressed forms. The bytes
/// are one buffer, or slices of a larger one: a project's view that leaves finished cards
/// out shares the buffer of the view that holds them all (see `render`).
#[derive(Debug)]
pub struct Piece {
    parts: Vec<Bytes>,
    len: usize,
    asked: Asked,
    gzip: OnceLock<Deflated>,
    zstd: OnceLock<Bytes>,
}

impl Piece {
    pub fn new(bytes: Bytes) -> Piece {
        Piece::of_parts(vec![bytes])
    }

    /// A piece whose bytes are `parts` joined.
    pub fn of_parts(parts: Vec<Bytes>) -> Piece {
        Piece {
            len: parts.iter().map(Bytes::len).sum(),
            parts,
            asked: Asked::default(),
            gzip: OnceLock::new(),
            zstd: OnceLock::new(),
        }
    }

    pub fn shared(bytes: Bytes) -> Arc<Piece> {
        Arc::new(Piece::new(bytes))
    }

    /// The uncompressed length.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The uncompressed bytes, in order: shared buffers, never copies.
    pub fn parts(&self) -> &[Bytes] {
        &self.parts
    }

    /// The uncompressed bytes as one buffer: shared when they are one, else joined.
    pub fn contiguous(&self) -> Bytes {
        match &self.parts[..] {
            [one] => one.clone(),
            parts => Bytes::from(parts.concat()),
        }
    }

    /// The deflate segment: the kept one, or made now (and kept if a reply asked for it
    /// before).
    pub fn gzip(&self) -> Deflated {
        if let Some(d) = self.gzip.get() {
            return d.clone();
        }
        let d = deflate(&self.parts, Compression::new(GZIP_CACHED));
        if self.asked.again(Encoding::Gzip) {
            let _ = self.gzip.set(d.clone());
        }
        d
    }

    /// The zstd frame: the kept one, or made now (and kept if a reply asked for it before).
    pub fn zstd(&self) -> Bytes {
        if let Some(z) = self.zstd.get() {
            return z.clone();
        }
        let z = Bytes::from(match &self.parts[..] {
            [one] => zstd_frame(one),
            parts => zstd_frame(&parts.concat()),
        });
        if self.asked.again(Encoding::Zstd) {
            let _ = self.zstd.set(z.clone());
        }
        z
    }

    /// Whether the form for `encoding` is kept (the identity form always is).
    pub fn kept(&self, encoding: Encoding) -> bool {
        match encoding {
            Encoding::Identity => true,
            Encoding::Gzip => self.gzip.get().is_some(),
            Encoding::Zstd => self.zstd.get().is_some(),
        }
    }
}

/// One part of a reply.
#[derive(Debug, Clone)]
pub enum Part {
    /// Kept between requests, with its compressed forms.
    Cached(Arc<Piece>),
    /// Made for this request (small), compressed when sent.
    Fresh(Bytes),
}

impl Part {
    /// The uncompressed length.
    pub fn len(&self) -> usize {
        match self {
            Part::Cached(p) => p.len(),
            Part::Fresh(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds the uncompressed buffers to `out`, shared, never copied.
    fn identity_into(&self, out: &mut Vec<Bytes>) {
        match self {
            Part::Cached(p) => out.extend(p.parts().iter().cloned()),
            Part::Fresh(b) => out.push(b.clone()),
        }
    }
}

/// The separators of a whole-account reply, cached like any piece.
pub static COMMA: LazyLock<Arc<Piece>> = LazyLock::new(|| Piece::shared(Bytes::from_static(b",")));
pub static CLOSE: LazyLock<Arc<Piece>> = LazyLock::new(|| Piece::shared(Bytes::from_static(b"]}")));

/// A reply as a chain of parts.
#[derive(Debug, Clone, Default)]
pub struct Chain(pub Vec<Part>);

impl Chain {
    /// The uncompressed length.
    pub fn len(&self) -> usize {
        self.0.iter().map(Part::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The uncompressed buffers, shared, never copied.
    pub fn identity(&self) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(self.0.len());
        for part in &self.0 {
            part.identity_into(&mut out);
        }
        out
    }

    /// The chain in `encoding`: cached forms as they are, fresh parts compressed now.
    pub fn encode(&self, encoding: Encoding) -> Vec<Bytes> {
        if encoding == Encoding::Identity {
            return self.identity();
        }
        let mut out = Joiner::new(encoding);
        for part in &self.0 {
            match part {
                Part::Cached(piece) => out.cached(piece),
                Part::Fresh(b) => out.fresh(b),
            }
        }
        out.finish()
    }
}

/// Replies shorter than this are sent as they are: compressing would save a few bytes.
pub const THRESHOLD: usize = 1024;

/// Bytes sent again and again in compressed form only (a project's cards in a changes
/// reply): each form made for the replies in its encoding, and kept from the second on,
/// as a piece's are.
#[derive(Debug, Default)]
pub struct Packed {
    /// The uncompressed length, known once a form is kept.
    len: OnceLock<usize>,
    asked: Asked,
    gzip: OnceLock<Deflated>,
    zstd: OnceLock<Bytes>,
}

/// One compressed form of packed bytes, for one reply.
#[derive(Debug, Clone)]
pub enum Form {
    Gzip(Deflated),
    /// A zstd frame and the length of the bytes it holds.
    Zstd(Bytes, usize),
}

impl Packed {
    /// Whether the form for `encoding` is kept (the identity form has nothing to make).
    pub fn made(&self, encoding: Encoding) -> bool {
        match encoding {
            Encoding::Identity => true,
            Encoding::Gzip => self.gzip.get().is_some(),
            Encoding::Zstd => self.zstd.get().is_some(),
        }
    }

    /// The form for `encoding`: the kept one, or made from `make()` when it is given (and
    /// kept if a reply asked for it before); `None` for the identity, or with nothing kept
    /// and nothing to make it from.
    pub fn form(&self, encoding: Encoding, make: Option<impl FnOnce() -> Vec<u8>>) -> Option<Form> {
        let kept = match encoding {
            Encoding::Identity => return None,
            Encoding::Gzip => self.gzip.get().cloned().map(Form::Gzip),
            Encoding::Zstd => (self.zstd.get().cloned())
                .zip(self.len.get().copied())
                .map(|(z, len)| Form::Zstd(z, len)),
        };
        if kept.is_some() {
            return kept;
        }
        let made = make?();
        let form = match encoding {
            Encoding::Zstd => Form::Zstd(Bytes::from(zstd_frame(&made)), made.len()),
            _ => Form::Gzip(deflate(&[&made], Compression::new(GZIP_CACHED))),
        };
        if self.asked.again(encoding) {
            let _ = self.len.set(made.len());
            match &form {
                Form::Gzip(d) => {
                    let _ = self.gzip.set(d.clone());
                }
                Form::Zstd(z, _) => {
                    let _ = self.zstd.set(z.clone());
                }
            }
        }
        Some(form)
    }
}

/// Joins a reply's parts into one gzip member or a run of zstd frames. Fresh bytes gather
/// until a kept form comes (or the end), and are compressed as one segment or frame.
pub struct Joiner {
    encoding: Encoding,
    out: Vec<Bytes>,
    crc: crc32fast::Hasher,
    len: u64,
    pending: Vec<u8>,
}

impl Joiner {
    pub fn new(encoding: Encoding) -> Joiner {
        let mut out = Vec::new();
        if encoding == Encoding::Gzip {
            out.push(Bytes::from_static(&GZIP_HEADER));
        }
        Joiner {
            encoding,
            out,
            crc: crc32fast::Hasher::new(),
            len: 0,
            pending: Vec::new(),
        }
    }

    /// The uncompressed length so far.
    pub fn identity_len(&self) -> usize {
        self.len as usize + self.pending.len()
    }

    /// Bytes made for this request.
    pub fn fresh(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    pub fn cached(&mut self, piece: &Piece) {
        self.flush();
        match self.encoding {
            Encoding::Identity => {
                self.len += piece.len() as u64;
                self.out.extend(piece.parts().iter().cloned());
            }
            Encoding::Gzip => self.segment(&piece.gzip()),
            Encoding::Zstd => {
                self.len += piece.len() as u64;
                self.out.push(piece.zstd());
            }
        }
    }

    /// A packed form in this joiner's encoding.
    pub fn form(&mut self, form: Option<Form>) {
        self.flush();
        match form {
            Some(Form::Gzip(d)) if self.encoding == Encoding::Gzip => self.segment(&d),
            Some(Form::Zstd(frame, len)) if self.encoding == Encoding::Zstd => {
                self.len += len as u64;
                self.out.push(frame);
            }
            _ => {}
        }
    }

    fn segment(&mut self, d: &Deflated) {
        self.crc
            .combine(&crc32fast::Hasher::new_with_initial_len(d.crc, d.len));
        self.len += d.len;
        self.out.push(d.segment.clone());
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.pending);
        match self.encoding {
            Encoding::Identity => {
                self.len += bytes.len() as u64;
                self.out.push(Bytes::from(bytes));
            }
            Encoding::Gzip => {
                let d = deflate_fresh(&bytes);
                self.segment(&d);
            }
            Encoding::Zstd => {
                self.len += bytes.len() as u64;
                self.out.push(Bytes::from(zstd_frame(&bytes)));
            }
        }
    }

    /// The reply's buffers.
    pub fn finish(mut self) -> Vec<Bytes> {
        self.flush();
        if self.encoding == Encoding::Gzip {
            let mut tail = Vec::with_capacity(FINAL_BLOCK.len() + 8);
            tail.extend_from_slice(&FINAL_BLOCK);
            tail.extend_from_slice(&self.crc.finalize().to_le_bytes());
            // ISIZE is the length modulo 2^32 (RFC 1952).
            tail.extend_from_slice(&(self.len as u32).to_le_bytes());
            self.out.push(Bytes::from(tail));
        }
        self.out
    }
}

/// A gzip member's header: deflate, no flags, no time, unknown OS (RFC 1952, 2.3).
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// An empty final deflate block, which closes the joined segments: what a deflate encoder
/// writes when it finishes with no input (`03 00`), taken from one.
static FINAL_BLOCK: LazyLock<Vec<u8>> = LazyLock::new(|| {
    DeflateEncoder::new(Vec::new(), Compression::fast())
        .finish()
        .expect("finishing into memory cannot fail")
});

/// A raw deflate segment of `parts` joined, ended by a sync flush so that it joins others.
fn deflate<B: AsRef<[u8]>>(parts: &[B], level: Compression) -> Deflated {
    let len: usize = parts.iter().map(|b| b.as_ref().len()).sum();
    let mut encoder = DeflateEncoder::new(Vec::with_capacity(len / 4 + 64), level);
    segment(&mut encoder, parts)
}

fn segment<B: AsRef<[u8]>>(encoder: &mut DeflateEncoder<Vec<u8>>, parts: &[B]) -> Deflated {
    let mut crc = crc32fast::Hasher::new();
    let mut len = 0;
    for bytes in parts {
        let bytes = bytes.as_ref();
        // Writing into memory cannot fail.
        encoder.write_all(bytes).expect("deflate into memory");
        crc.update(bytes);
        len += bytes.len() as u64;
    }
    encoder.flush().expect("deflate into memory");
    let mut segment = std::mem::take(encoder.get_mut());
    // A kept form holds what it uses, not the room it was written into.
    segment.shrink_to_fit();
    Deflated {
        segment: Bytes::from(segment),
        crc: crc.finalize(),
        len,
    }
}

/// `bytes` as a stored block (RFC 1951, 3.2.4), not final: its header, on the byte boundary
/// every segment starts on, is a zero byte, then the length and its complement.
fn stored(bytes: &[u8]) -> Deflated {
    let len = u16::try_from(bytes.len()).expect("a stored block holds at most 65535 bytes");
    let mut segment = Vec::with_capacity(bytes.len() + 5);
    segment.push(0);
    segment.extend_from_slice(&len.to_le_bytes());
    segment.extend_from_slice(&(!len).to_le_bytes());
    segment.extend_from_slice(bytes);
    Deflated {
        segment: Bytes::from(segment),
        crc: crc32fast::hash(bytes),
        len: bytes.len() as u64,
    }
}

thread_local! {
    /// One deflate encoder per thread for fresh parts, made once: making one allocates and
    /// clears its tables.
    static FRESH_DEFLATE: RefCell<DeflateEncoder<Vec<u8>>> =
        RefCell::new(DeflateEncoder::new(Vec::new(), Compression::new(GZIP_FRESH)));
    /// One zstd context per thread, made once: zstd's contexts are made to be reused, and
    /// one made per piece would leave the C allocator's arenas full of them.
    static ZSTD: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        RefCell::new(zstd::bulk::Compressor::new(ZSTD_LEVEL).ok());
}

fn deflate_fresh(bytes: &[u8]) -> Deflated {
    if bytes.len() < STORED_BELOW {
        return stored(bytes);
    }
    FRESH_DEFLATE.with_borrow_mut(|encoder| {
        let d = segment(encoder, &[bytes]);
        // Starts the next segment from a clean state (what finishing writes is dropped).
        let _ = encoder.reset(Vec::new());
        d
    })
}

/// One zstd frame of `bytes`, sized to what it holds.
fn zstd_frame(bytes: &[u8]) -> Vec<u8> {
    let made = ZSTD.with_borrow_mut(|context| {
        let context = context.as_mut()?;
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(bytes.len()));
        context.compress_to_buffer(bytes, &mut out).ok()?;
        out.shrink_to_fit();
        Some(out)
    });
    made.unwrap_or_else(|| zstd::bulk::compress(bytes, ZSTD_LEVEL).expect("zstd into memory"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn chain() -> Chain {
        let fragment = |i: usize| {
            let body: String = (0..200)
                .map(|n| format!("{{\"id\":\"t_{i}_{n}\",\"title\":\"Card {n}\"}},"))
                .collect();
            Part::Cached(Piece::shared(Bytes::from(format!("[{body}null]"))))
        };
        Chain(vec![
            Part::Fresh(Bytes::from_static(
                b"{\"version\":1,\"now\":5,\"projects\":[",
            )),
            fragment(1),
            Part::Cached(COMMA.clone()),
            fragment(2),
            Part::Fresh(Bytes::new()),
            Part::Cached(CLOSE.clone()),
        ])
    }

    #[test]
    fn joined_gzip_segments_are_one_member_holding_every_byte() {
        let chain = chain();
        let identity = chain.identity().concat();
        let gzip = chain.encode(Encoding::Gzip).concat();
        // One member: a reader of the first member alone gets everything.
        let mut one = flate2::read::GzDecoder::new(&gzip[..]);
        let mut out = Vec::new();
        one.read_to_end(&mut out).unwrap();
        assert_eq!(out, identity);
        assert!(
            gzip.len() * 5 < identity.len(),
            "{} of {}",
            gzip.len(),
            identity.len()
        );
        // Fresh parts compress the same on a reused encoder.
        let again = chain.encode(Encoding::Gzip).concat();
        assert_eq!(again, gzip);
    }

    #[test]
    fn a_short_fresh_part_is_a_stored_block_that_joins_the_member() {
        let head = Bytes::from_static(b"{\"now\":1}");
        let chain = Chain(vec![
            Part::Fresh(head.clone()),
            Part::Cached(Piece::shared(Bytes::from("x".repeat(5000)))),
            Part::Fresh(Bytes::from("y".repeat(STORED_BELOW * 3))),
        ]);
        let gzip = chain.encode(Encoding::Gzip);
        // The header, then the head as it is: a stored block.
        assert_eq!(&gzip[1][5..], &head[..]);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gzip.concat()[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, chain.identity().concat());
    }

    #[test]
    fn zstd_frames_concatenate_into_one_stream() {
        let chain = chain();
        let identity = chain.identity().concat();
        let zstd = chain.encode(Encoding::Zstd).concat();
        assert_eq!(zstd::stream::decode_all(&zstd[..]).unwrap(), identity);
        assert!(zstd.len() * 5 < identity.len());
    }

    /// A piece's form is made for each reply in its encoding and kept from the second on;
    /// every reply, kept form or not, holds the same bytes.
    #[test]
    fn a_form_is_kept_from_the_second_reply_in_its_encoding_on() {
        let chain = chain();
        let identity = chain.identity().concat();
        let Part::Cached(piece) = &chain.0[1] else {
            panic!("a cached fragment");
        };
        for round in 1..=3 {
            let gzip = chain.encode(Encoding::Gzip).concat();
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&gzip[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, identity, "gzip, reply {round}");
            assert_eq!(
                piece.kept(Encoding::Gzip),
                round >= 2,
                "gzip, reply {round}"
            );
            assert!(!piece.kept(Encoding::Zstd));
        }
        for round in 1..=3 {
            let zstd = chain.encode(Encoding::Zstd).concat();
            assert_eq!(zstd::stream::decode_all(&zstd[..]).unwrap(), identity);
            assert_eq!(
                piece.kept(Encoding::Zstd),
                round >= 2,
                "zstd, reply {round}"
            );
        }
    }
}
