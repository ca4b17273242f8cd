//! The k best (score, row) pairs of one probe: a binary min-heap whose root is the worst kept.
//! Ranking: higher score first; equal scores, lower row first.

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub score: f64,
    pub row: u32,
}

impl Candidate {
    /// Whether `self` ranks strictly before `other`.
    #[inline]
    pub fn ranks_before(&self, other: &Candidate) -> bool {
        self.score > other.score || (self.score == other.score && self.row < other.row)
    }
}

pub struct TopK {
    heap: Vec<Candidate>,
    k: usize,
}

impl TopK {
    pub fn new(k: usize) -> TopK {
        TopK {
            heap: Vec::with_capacity(k),
            k,
        }
    }

    pub fn is_full(&self) -> bool {
        self.heap.len() == self.k
    }

    /// The worst candidate kept, once full.
    pub fn worst(&self) -> Option<&Candidate> {
        self.heap.first()
    }

    /// Keeps `candidate` if it belongs to the k best so far; says whether it was kept.
    pub fn offer(&mut self, candidate: Candidate) -> bool {
        if self.heap.len() < self.k {
            self.heap.push(candidate);
            self.sift_up(self.heap.len() - 1);
            return true;
        }
        match self.heap.first() {
            Some(worst) if candidate.ranks_before(worst) => {
                self.heap[0] = candidate;
                self.sift_down(0);
                true
            }
            _ => false,
        }
    }

    /// The kept candidates, best first.
    pub fn into_sorted(mut self) -> Vec<Candidate> {
        self.heap.sort_unstable_by(|a, b| {
            if a.ranks_before(b) {
                std::cmp::Ordering::Less
            } else if b.ranks_before(a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        self.heap
    }

    fn sift_up(&mut self, mut index: usize) {
        while index > 0 {
            let parent = (index - 1) / 2;
            if !self.heap[parent].ranks_before(&self.heap[index]) {
                break;
            }
            self.heap.swap(parent, index);
            index = parent;
        }
    }

    fn sift_down(&mut self, mut index: usize) {
        let length = self.heap.len();
        loop {
            let (left, right) = (2 * index + 1, 2 * index + 2);
            let mut worst = index;
            if left < length && self.heap[worst].ranks_before(&self.heap[left]) {
                worst = left;
            }
            if right < length && self.heap[worst].ranks_before(&self.heap[right]) {
                worst = right;
            }
            if worst == index {
                break;
            }
            self.heap.swap(index, worst);
            index = worst;
        }
    }
}
