//! One tile of gallery rows scored against a batch of probes: the kernels' register blocks, the
//! block filter, and each probe's top-k list with its gate (the margins are explained at the top
//! of the `scan` module).

use crate::kernel::{BlockGate, EncodedProbes, Kernels};
use crate::scan_view::score;
use crate::top_k::{Candidate, TopK};

/// Rows per tile: 16 x 256 bytes = 4 KB, well inside L1.
pub(crate) const TILE_ROWS: usize = 16;
const FILTER_MARGIN: f64 = 1.0 - 1e-9;
const ROOT_MARGIN: f32 = 1.0 - 1e-6;

pub(crate) struct Tile<'a> {
    pub(crate) first_row: usize,
    pub(crate) rows: &'a [*const i8; TILE_ROWS],
    pub(crate) live: &'a [bool; TILE_ROWS],
    pub(crate) norms: &'a [u32; TILE_ROWS],
    pub(crate) norm_roots: &'a [f32; TILE_ROWS],
}

#[inline(always)]
pub(crate) fn score_tile(
    kernels: &Kernels,
    tile: &Tile,
    probes: &EncodedProbes,
    probe_sums: &[i32],
    states: &mut [ProbeState],
    dimension: usize,
) {
    let probe_pointers = probes.pointers();
    let mut probe = 0;
    while probe < probe_pointers.len() {
        let remaining = probe_pointers.len() - probe;
        // Chunks of 16 come first, so `probe` is a multiple of 16 here while any is left.
        let interleaved = match (kernels.tile_16x16, remaining >= 16) {
            (Some(tile_16x16), true) => probes
                .interleaved_16(probe / 16)
                .map(|pointer| (tile_16x16, pointer)),
            _ => None,
        };
        // SAFETY (all four calls): `kernels` belongs to an available ISA; every row pointer is
        // valid for `dimension` bytes (see the tile's construction) and so is every probe
        // pointer (`validate_scan` checked probes.len() == probe_count * dimension), and the
        // interleaved chunk holds these 16 probes.
        if let Some((tile_16x16, pointer)) = interleaved {
            let sums: &[i32; 16] = probe_sums[probe..probe + 16]
                .try_into()
                .expect("a chunk of 16 probes");
            let states = &mut states[probe..probe + 16];
            let gate_roots: [f32; 16] = std::array::from_fn(|index| states[index].gate_root);
            let gate = BlockGate {
                gate_roots: &gate_roots,
                norm_roots: tile.norm_roots,
            };
            let mut dots = [[0i32; 16]; 16];
            let passing =
                unsafe { tile_16x16(tile.rows, pointer, sums, dimension, &gate, &mut dots) };
            if passing != 0 {
                offer_rows(tile, 0, &dots, states, u32::from(passing));
            }
            probe += 16;
        } else if remaining >= 4 {
            for block in 0..TILE_ROWS / 4 {
                let rows: [*const i8; 4] =
                    std::array::from_fn(|index| tile.rows[4 * block + index]);
                let pointers: [*const i8; 4] =
                    std::array::from_fn(|index| probe_pointers[probe + index]);
                let sums: [i32; 4] = std::array::from_fn(|index| probe_sums[probe + index]);
                let dots = unsafe { (kernels.tile_4x4)(&rows, &pointers, &sums, dimension) };
                offer_block(tile, 4 * block, &dots, &mut states[probe..probe + 4]);
            }
            probe += 4;
        } else if remaining >= 2 {
            for block in 0..TILE_ROWS / 8 {
                let rows: [*const i8; 8] =
                    std::array::from_fn(|index| tile.rows[8 * block + index]);
                let pointers = [probe_pointers[probe], probe_pointers[probe + 1]];
                let sums = [probe_sums[probe], probe_sums[probe + 1]];
                let dots = unsafe { (kernels.tile_8x2)(&rows, &pointers, &sums, dimension) };
                offer_block(tile, 8 * block, &dots, &mut states[probe..probe + 2]);
            }
            probe += 2;
        } else {
            let dots = unsafe {
                (kernels.tile_16x1)(
                    tile.rows,
                    &[probe_pointers[probe]],
                    &[probe_sums[probe]],
                    dimension,
                )
            };
            offer_block(tile, 0, &dots, &mut states[probe..probe + 1]);
            probe += 1;
        }
    }
}

#[inline(always)]
fn offer_block<const R: usize, const P: usize>(
    tile: &Tile,
    first: usize,
    dots: &[[i32; P]; R],
    states: &mut [ProbeState],
) {
    // Gate the whole block branch-free first, in f32 (it vectorises, 8 lanes to a ymm): once
    // the lists are full, almost no block holds a single pair that passes the filter.
    let gate_roots: [f32; P] = std::array::from_fn(|probe| states[probe].gate_root);
    let mut any_passes = false;
    for (offset, row_dots) in dots.iter().enumerate() {
        let norm_root = tile.norm_roots[first + offset];
        for (&dot, gate_root) in row_dots.iter().zip(&gate_roots) {
            any_passes |= dot as f32 >= gate_root * norm_root;
        }
    }
    if any_passes {
        offer_rows(tile, first, dots, states, u32::MAX);
    }
}

/// Offers each live row of a block whose bit is set in `wanted` (bit `offset` for the block's row
/// `offset`) to every probe's list (the exact per-row test).
#[inline(always)]
fn offer_rows<const R: usize, const P: usize>(
    tile: &Tile,
    first: usize,
    dots: &[[i32; P]; R],
    states: &mut [ProbeState],
    wanted: u32,
) {
    for (offset, row_dots) in dots.iter().enumerate() {
        let index = first + offset;
        if !tile.live[index] || (wanted >> offset) & 1 == 0 {
            continue;
        }
        let row = (tile.first_row + index) as u32;
        for (state, &dot) in states.iter_mut().zip(row_dots) {
            state.offer(row, dot, tile.norms[index]);
        }
    }
}

pub(crate) struct ProbeState {
    pub(crate) top: TopK,
    norm_squared: u32,
    /// A row passes when `max(dot, 0)^2 >= gate * row_norm`: while the list is not full `-1`
    /// (every row passes) or the floor's `floor^2 * probe_norm * FILTER_MARGIN`, then the larger
    /// of that and `worst^2 * probe_norm * FILTER_MARGIN` (see the `scan` module comment).
    gate: f64,
    /// The block filter's form of the gate: `f32::MIN` while it is `-1` (times any row norm's root
    /// it is below every dot; `-inf` would give NaN for a zero row and drop it), then
    /// `sqrt(gate) * ROOT_MARGIN` in f32 (see the module comment).
    gate_root: f32,
}

impl ProbeState {
    /// `floor`: the score below which rows need not be kept (see `ProbeBatch::score_floors`).
    pub(crate) fn new(k: usize, norm_squared: u32, floor: f64) -> ProbeState {
        let mut state = ProbeState {
            top: TopK::new(k),
            norm_squared,
            gate: -1.0,
            gate_root: f32::MIN,
        };
        if floor > 0.0 {
            state.raise_gate(floor);
        }
        state
    }

    /// Rows scoring below `score` can no longer enter the list (the gate only ever rises).
    fn raise_gate(&mut self, score: f64) {
        let gate = score * score * f64::from(self.norm_squared) * FILTER_MARGIN;
        if gate > self.gate {
            self.gate = gate;
            self.gate_root = gate.sqrt() as f32 * ROOT_MARGIN;
        }
    }

    #[inline]
    fn offer(&mut self, row: u32, dot: i32, row_norm_squared: u32) {
        // No branch on the sign of the dot (a coin flip on real data): a dot <= 0 gives
        // `0 >= gate * norm`, false once the gate is positive; if the worst kept score is 0 it
        // passes here and is refused by `TopK::offer` (equal score, higher row).
        let positive = f64::from(dot.max(0));
        if positive * positive < self.gate * f64::from(row_norm_squared) {
            return;
        }
        let candidate = Candidate {
            score: score(dot, self.norm_squared, row_norm_squared),
            row,
        };
        if self.top.offer(candidate) && self.top.is_full() {
            if let Some(worst) = self.top.worst() {
                self.raise_gate(worst.score);
            }
        }
    }
}
