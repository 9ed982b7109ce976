//! Pure vector helpers of the embedder: mean pooling, L2 normalisation, cosine, and the plan that
//! groups texts of similar length into batches. They build without the `embed` feature too,
//! where only their unit tests call the pooling and the batch plan.
#![cfg_attr(not(feature = "embed"), allow(dead_code))]

use super::DIM;

/// Most texts in one batch: batching only pays for short texts on one thread.
const MAX_BATCH: usize = 16;
/// Most padded tokens (batch × longest) in one batch.
const BATCH_TOKENS: usize = 256;
/// Largest share of padding a batch may carry (padded tokens that the model computes for nothing).
const MAX_PADDING: f32 = 0.2;

/// Cosine similarity of two vectors; 0 when either is all zeros or their lengths differ.
/// For the embedder's unit vectors this is their dot product.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let norm = (na * nb).sqrt();
    if norm > 0.0 {
        dot / norm
    } else {
        0.0
    }
}

/// Mean of the first `len` rows of `hidden` (`[seq, DIM]`, row-major: the tokens the mask keeps,
/// since rows are right-padded), scaled to unit length. An empty or all-zero row gives zeros.
pub fn mean_pool(hidden: &[f32], len: usize) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    for row in hidden.chunks_exact(DIM).take(len) {
        for (acc, x) in v.iter_mut().zip(row) {
            *acc += x;
        }
    }
    // The mean's scale cancels in the normalisation, but keep it for the same rounding as
    // sentence-transformers (sum / count, then / norm).
    let n = len.max(1) as f32;
    v.iter_mut().for_each(|x| *x /= n);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Groups text indices into batches: sorted by token count, a batch grows while it stays within
/// [`MAX_BATCH`] texts, [`BATCH_TOKENS`] padded tokens and [`MAX_PADDING`] padding. Long texts
/// run one at a time. Every index appears in exactly one batch.
pub fn plan_batches(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lens.len()).collect();
    order.sort_by_key(|&i| lens[i]);
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut real = 0usize;
    for i in order {
        // Sorted ascending, so the newcomer is the longest of the batch.
        let count = current.len() + 1;
        let padded = count * lens[i];
        let fits = count <= MAX_BATCH
            && padded <= BATCH_TOKENS
            && ((padded - real - lens[i]) as f32) <= MAX_PADDING * padded as f32;
        if !fits && !current.is_empty() {
            batches.push(std::mem::take(&mut current));
            real = 0;
        }
        current.push(i);
        real += lens[i];
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn mean_pool_ignores_padding_and_normalises() {
        let mut hidden = vec![0f32; 3 * DIM];
        hidden[0] = 1.0; // token 0
        hidden[DIM + 1] = 1.0; // token 1
        hidden[2 * DIM + 2] = 100.0; // padding row, must not count
        let v = mean_pool(&hidden, 2);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((v[0] - h).abs() < 1e-6 && (v[1] - h).abs() < 1e-6 && v[2] == 0.0);
        assert!(mean_pool(&hidden, 0).iter().all(|&x| x == 0.0));
    }

    #[test]
    fn batches_cover_every_text_once_and_respect_limits() {
        let lens = [
            300, 5, 7, 256, 6, 40, 41, 2, 100, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
        ];
        let batches = plan_batches(&lens);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..lens.len()).collect::<Vec<_>>());
        for b in &batches {
            let longest = b.iter().map(|&i| lens[i]).max().unwrap_or(0);
            assert!(b.len() == 1 || (b.len() <= MAX_BATCH && b.len() * longest <= BATCH_TOKENS));
        }
        // The long ones run alone.
        assert!(batches.contains(&vec![0]) && batches.contains(&vec![3]));
        assert!(plan_batches(&[]).is_empty());
    }
}
