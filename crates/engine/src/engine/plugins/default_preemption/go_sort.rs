//! Go's `sort.Slice` (pattern-defeating quicksort, Go ≥ 1.22), reproduced so that
//! equal elements end up where kube-scheduler puts them.
//!
//! Preemption sorts victims with `sort.Slice`, which is not stable: with more than 12
//! pods of equal priority and start time, which of them is reprieved depends on
//! this exact algorithm. Up to 12 elements it is an insertion sort (stable).

/// Sorts `v` so that `less(a, b)` holds for no later `a` than `b`, moving elements
/// exactly as Go's `sort.Slice(v, less)` does.
pub fn sort_slice<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let n = v.len();
    let limit = bit_len(n);
    let mut s = Sorter { v, less: &mut less };
    s.pdqsort(0, n, limit);
}

/// `bits.Len`: number of bits needed to represent `n`.
fn bit_len(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

struct Sorter<'a, T, F: FnMut(&T, &T) -> bool> {
    v: &'a mut [T],
    less: &'a mut F,
}

impl<T, F: FnMut(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&mut self, i: usize, j: usize) -> bool {
        (self.less)(&self.v[i], &self.v[j])
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.v.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let first = a;
        let hi = b - a;
        let mut i = (hi as isize - 1) / 2;
        while i >= 0 {
            self.sift_down(i as usize, hi, first);
            i -= 1;
        }
        for i in (0..hi).rev() {
            self.swap(first, first + i);
            self.sift_down(0, i, first);
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: usize) {
        const MAX_INSERTION: usize = 12;
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            // Many elements equal to the pivot: split off the equal run.
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already) = self.partition(a, b, pivot);
            was_partitioned = already;
            let (left, right) = (mid - a, b - mid);
            let threshold = length / 8;
            if left < right {
                was_balanced = left >= threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        // i and j are inclusive bounds of what is left; j may drop to a (never below).
        let (mut i, mut j) = (a + 1, b - 1);
        while i <= j && self.less(i, a) {
            i += 1;
        }
        while i <= j && !self.less(j, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j, a);
            return (j, true);
        }
        self.swap(i, j);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i, a) {
                i += 1;
            }
            while i <= j && !self.less(j, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        self.swap(j, a);
        (j, false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a + 1, b - 1);
        loop {
            while i <= j && !self.less(a, i) {
                i += 1;
            }
            while i <= j && self.less(a, j) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        i
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1usize << bit_len(length);
            let start = a + (length / 4) * 2 - 1;
            for idx in start..=start + 2 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random as usize) & (modulus - 1);
                if other >= length {
                    other -= length;
                }
                self.swap(idx, a + other);
            }
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0usize;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median(i - 1, i, i + 1, &mut swaps);
                j = self.median(j - 1, j, j + 1, &mut swaps);
                k = self.median(k - 1, k, k + 1, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&mut self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&mut self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, _c) = self.order2(b, c, swaps);
        let (_a, b) = self.order2(a, b, swaps);
        b
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator for test inputs.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn sorts_like_a_sort() {
        let mut seed = 7;
        for n in [0usize, 1, 2, 5, 12, 13, 20, 49, 50, 51, 100, 257, 1000] {
            for modulo in [3u64, 1000] {
                let mut v: Vec<u64> = (0..n).map(|_| lcg(&mut seed) % modulo).collect();
                let mut expected = v.clone();
                expected.sort();
                sort_slice(&mut v, |a, b| a < b);
                assert_eq!(v, expected, "n={n} modulo={modulo}");
            }
        }
        // Already sorted, reversed and constant inputs take the special paths.
        let mut asc: Vec<u32> = (0..300).collect();
        sort_slice(&mut asc, |a, b| a < b);
        assert!(asc.windows(2).all(|w| w[0] <= w[1]));
        let mut desc: Vec<u32> = (0..300).rev().collect();
        sort_slice(&mut desc, |a, b| a < b);
        assert!(desc.windows(2).all(|w| w[0] <= w[1]));
        let mut same = vec![4u32; 300];
        sort_slice(&mut same, |a, b| a < b);
        assert!(same.iter().all(|x| *x == 4));
    }

    #[test]
    fn small_inputs_are_stable() {
        // (key, original position): insertion sort keeps equal keys in order.
        let mut v: Vec<(u32, usize)> = [2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1]
            .into_iter()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        sort_slice(&mut v, |a, b| a.0 < b.0);
        let order: Vec<usize> = v.iter().map(|x| x.1).collect();
        assert_eq!(order, vec![1, 3, 5, 7, 9, 11, 0, 2, 4, 6, 8, 10]);
    }

    #[test]
    fn larger_inputs_follow_go_partitioning() {
        // 13 elements (value i % 2, position i): one partition round, then insertion
        // sorts. Expected order traced by hand through Go's pdqsort_func: pivot
        // median(3, 6, 9) = index 3, partition swaps (1,12) (5,10) (7,8), pivot to 7.
        let mut v: Vec<(u32, usize)> = (0..13).map(|i| ((i % 2) as u32, i)).collect();
        sort_slice(&mut v, |a, b| a.0 < b.0);
        let order: Vec<usize> = v.iter().map(|x| x.1).collect();
        assert_eq!(order, vec![8, 12, 2, 0, 4, 10, 6, 3, 7, 9, 5, 11, 1]);
    }
}
