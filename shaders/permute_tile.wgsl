// Permuted moves through workgroup tiles (src/kernels/permute_tile.rs), for
// moves that carry the source's contiguous axis across the destination's
// rows (a transpose of the fastest axis): each workgroup moves one 32 x 32
// tile of elements (units: u32, vec2<u32> or vec4<u32>; elements of 2 to
// 16 bits packed in u32 words, `packed_phases`), loading it along
// the axis its reads are contiguous on (consecutive lanes on consecutive
// source units) and storing it along the axis its writes are contiguous on
// (consecutive lanes on consecutive destination units), through workgroup
// memory. Every other dimension of the view picks the tile's batch.
//
// params (a uniform block, read as words by `p`): a header, then one
// record per slot, laid out as Rust's PermuteHeader and TileRecord
// (src/kernels/permute_records.rs; the constants naming their words are
// generated from them): the slot's first workgroup and workgroups, its
// tiles along the read and write axes, the two axes (dimensions of the
// view), the view's rank, read and write offsets and shifts, the element
// bits, its dims and the strides it reads and writes through. Offsets and
// strides count elements; the shifts (between a binding's start and its
// region's) count units: whole elements, or words for packed ones.
//
// The `note` holes and `trace`/`trace_start` are empty except in the
// module's access-trace variant (kernels::wgsl::TraceHooks).

//#fragment module
{{consts}}const TILE: u32 = {{tile}}u;
// Rows of the tile one pass of the workgroup's invocations covers.
const ROWS: u32 = WORKGROUP_SIZE / TILE;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
{{bindings}}{{trace}}
var<workgroup> tile: array<{{unit}}, {{tile_cells}}>;

fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The tile's cell of (row, column), rotated by the row: a row's 32 cells
// and a column's fall in 32 different banks.
fn cell(row: u32, column: u32) -> u32 {
    return row * TILE + ((column + row) % TILE);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wid.x + wid.y * groups.x;
{{trace_start}}    let count = p(H_RECORDS);
    var slot = 0u;
    var r = HEADER;
    loop {
        if (slot >= count) {
            return;
        }
        r = HEADER + slot * RECORD;
        if (group >= p(r + R_FIRST) && group < p(r + R_FIRST) + p(r + R_WORKGROUPS)) {
            break;
        }
        slot += 1u;
    }
    let tiles_read = p(r + R_TILES_READ);
    let tiles_write = p(r + R_TILES_WRITE);
    let read_axis = p(r + R_READ_AXIS);
    let write_axis = p(r + R_WRITE_AXIS);
    let rank = p(r + R_RANK);
    let t = group - p(r + R_FIRST);
    let write0 = (t % tiles_write) * TILE;
    let read0 = ((t / tiles_write) % tiles_read) * TILE;
    // The tile's batch: every dimension but the two axes, innermost last.
    var rest = t / (tiles_write * tiles_read);
    var read_at = p(r + R_READ_AT);
    var write_at = p(r + R_WRITE_AT);
    let read_shift = p(r + R_READ_SHIFT);
    let write_shift = p(r + R_WRITE_SHIFT);
    for (var j = rank; j > 0u; j -= 1u) {
        let k = j - 1u;
        if (k != read_axis && k != write_axis) {
            let d = p(r + R_DIMS + k);
            let i = rest % d;
            rest /= d;
            read_at += i * p(r + R_READ_STRIDES + k);
            write_at += i * p(r + R_WRITE_STRIDES + k);
        }
    }
    let read_dim = p(r + R_DIMS + read_axis);
    let write_dim = p(r + R_DIMS + write_axis);
    let x = lid % TILE;
    let y = lid / TILE;
    let read_step = p(r + R_READ_STRIDES + read_axis);
    let across_read = p(r + R_READ_STRIDES + write_axis);
    let write_step = p(r + R_WRITE_STRIDES + write_axis);
    let across_write = p(r + R_WRITE_STRIDES + read_axis);
{{phases}}
}

//#fragment whole_phases
    // Loads: lane x on read index read0 + x (the read axis, contiguous in
    // the source), each pass a row of the write axis.
    for (var k = 0u; k < TILE; k += ROWS) {
        let w = write0 + y + k;
        let i = read0 + x;
        if (w < write_dim && i < read_dim) {
            tile[cell(y + k, x)] = load(slot, read_shift + read_at + i * read_step + w * across_read);
        }
    }
    workgroupBarrier();
    // Stores: lane x on write index write0 + x (the write axis, contiguous
    // in the destination), each pass a row of the read axis.
    for (var k = 0u; k < TILE; k += ROWS) {
        let i = read0 + y + k;
        let w = write0 + x;
        if (w < write_dim && i < read_dim) {
            store(slot, write_shift + write_at + w * write_step + i * across_write, tile[cell(x, y + k)]);
        }
    }

//#fragment packed_phases
    // Elements of {{bits}} bits, packed in 32-bit words; the shifts count
    // words. Loads: lane x takes element read0 + x of the read axis out
    // of the word holding it (neighbouring lanes share words).
    const BITS: u32 = {{bits}}u;
    let per_word = 32u / BITS;
    let mask = (1u << BITS) - 1u;
    for (var k = 0u; k < TILE; k += ROWS) {
        let w = write0 + y + k;
        let i = read0 + x;
        if (w < write_dim && i < read_dim) {
            let bit = (read_at + i * read_step + w * across_read) * BITS;
            tile[cell(y + k, x)] = (load(slot, read_shift + bit / 32u) >> (bit % 32u)) & mask;
        }
    }
    workgroupBarrier();
    // Stores: a whole word per lane, `per_word` consecutive elements of
    // the write axis (the plan makes every output row whole words, so no
    // word is shared with another tile); a row of the tile takes
    // TILE / per_word lanes.
    let lanes = TILE / per_word;
    let xs = lid % lanes;
    let ys = lid / lanes;
    let rows = WORKGROUP_SIZE / lanes;
    for (var k = 0u; k < TILE; k += rows) {
        let i = read0 + ys + k;
        let w = write0 + xs * per_word;
        if (ys + k < TILE && w < write_dim && i < read_dim) {
            var value = 0u;
            for (var j = 0u; j < per_word; j += 1u) {
                value |= tile[cell(xs * per_word + j, ys + k)] << (j * BITS);
            }
            store(slot, write_shift + (write_at + w + i * across_write) / per_word, value);
        }
    }

//#fragment split_bindings
@group(0) @binding(1) var<storage, {{src_access}}> src: array<{{unit}}>;
{{destinations}}
fn load(slot: u32, i: u32) -> {{unit}} {
    {{note_load}}return src[i];
}

fn store(slot: u32, i: u32, v: {{unit}}) {
    switch slot {
{{stores}}
        default: {}
    }
}

//#fragment split_destination
@group(0) @binding({{binding}}) var<storage, read_write> dst{{slot}}: array<{{unit}}>;

//#fragment split_store
        case {{slot}}u: { {{note}}dst{{slot}}[i] = v; }

//#fragment concat_bindings
@group(0) @binding(1) var<storage, read_write> dst: array<{{unit}}>;
{{pieces}}
fn load(slot: u32, i: u32) -> {{unit}} {
    switch slot {
{{loads}}
        default: { return {{unit}}(); }
    }
}

fn store(slot: u32, i: u32, v: {{unit}}) {
    {{note_store}}dst[i] = v;
}

//#fragment concat_piece
@group(0) @binding({{binding}}) var<storage, {{access}}> piece{{slot}}: array<{{unit}}>;

//#fragment concat_load
        case {{slot}}u: { {{note}}return piece{{slot}}[i]; }
