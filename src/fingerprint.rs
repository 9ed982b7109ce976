//! Chained fingerprints and content ids.
//!
//! A message's fingerprint hashes the previous fingerprint with the message's own bytes, so it
//! names the message *and* the whole history before it: two requests share a prefix exactly when
//! they share the fingerprint of its last message.

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
    fn hex_round_trip() {
        let a = Fp::START.then(b"x");
        assert_eq!(Fp::from_hex(&a.to_hex()), Some(a));
        assert_eq!(Fp::from_hex("zz"), None);
        assert_eq!(content_id("same").len(), 16);
        assert_eq!(content_id("same"), content_id("same"));
    }
}
