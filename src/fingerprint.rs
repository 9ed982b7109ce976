//! Chained fingerprints and content ids.
//!
//! A message's fingerprint hashes the previous fingerprint with the message's own bytes, so it
//! names the message *and* the whole history before it: two requests share a prefix exactly when
//! they share the fingerprint of its last message.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by fingerprints or small integers, hashed with [`KeyHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// A hasher for keys that are already well spread (fingerprints are cryptographic hashes) or
/// small integers: a multiply-rotate per word, several times cheaper than SipHash per lookup.
/// Not for keys an adversary chooses.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A 128-bit fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Fp(pub [u8; 16]);

impl Fp {
    /// The fingerprint before the first message.
    pub const START: Fp = Fp([0; 16]);

    /// The fingerprint of a message with the given serialized bytes following `self`.
    pub fn then(&self, message: &[u8]) -> Fp {
        let mut h = blake3::Hasher::new();
        h.update(&self.0);
        h.update(message);
        let mut out = [0u8; 16];
        out.copy_from_slice(&h.finalize().as_bytes()[..16]);
        Fp(out)
    }

    /// Lower-case hex, 32 characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Parses 32 hex characters.
    pub fn from_hex(s: &str) -> Option<Fp> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut out = [0u8; 16];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Fp(out))
    }
}

/// A content-derived id: the same text always gets the same id (16 hex characters).
pub fn content_id(text: &str) -> String {
    hex(&blake3::hash(text.as_bytes()).as_bytes()[..8])
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

impl serde::Serialize for Fp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Fp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Fp, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Fp::from_hex(&s)
            .ok_or_else(|| serde::de::Error::custom("fingerprint must be 32 hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_depends_on_history_and_content() {
        let a = Fp::START.then(b"x");
        assert_eq!(a, Fp::START.then(b"x"));
        assert_ne!(a, Fp::START.then(b"y"));
        assert_ne!(a.then(b"z"), Fp::START.then(b"z"));
    }

    #[test]
    fn key_hasher_tells_keys_apart() {
        let mut m: FastMap<Fp, u32> = FastMap::default();
        let mut fp = Fp::START;
        for i in 0..1000u32 {
            fp = fp.then(&i.to_le_bytes());
            m.insert(fp, i);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&fp), Some(&999));
        let ids: FastMap<u32, u32> = (0..1000).map(|i| (i, i * 2)).collect();
        assert_eq!(ids.get(&7), Some(&14));
    }

    #[test]
    fn hex_round_trip() {
        let a = Fp::START.then(b"x");
        assert_eq!(Fp::from_hex(&a.to_hex()), Some(a));
        assert_eq!(Fp::from_hex("zz"), None);
        assert_eq!(content_id("same").len(), 16);
        assert_eq!(content_id("same"), content_id("same"));
    }
}
