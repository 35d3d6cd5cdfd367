// Permuted moves through workgroup tiles (src/kernels/permute_tile.rs), for
// moves that carry the source's contiguous axis across the destination's
// rows (a transpose of the fastest axis): each workgroup moves one 32 x 32
// tile of elements (units: u32, vec2<u32> or vec4<u32>), loading it along
// the axis its reads are contiguous on (consecutive lanes on consecutive
// source units) and storing it along the axis its writes are contiguous on
// (consecutive lanes on consecutive destination units), through workgroup
// memory. Every other dimension of the view picks the tile's batch.
//
// params (a uniform block, read as words by `p`): the dispatch's header
// [slots, 0, 0, 0], then per slot RECORD words: first (workgroup),
// workgroups, tiles along the read axis, tiles along the write axis, the
// read axis (a dimension of the view), the write axis, rank, read offset,
// write offset, read shift, write shift, 0, dims[8], read strides[8],
// write strides[8]. The shifts are units between a binding's start and its
// region's.

//#fragment module
const RECORD: u32 = 36u;
const HEADER: u32 = 4u;
const TILE: u32 = 32u;
// Rows of the tile one pass of the 256 invocations covers.
const ROWS: u32 = 8u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, {{vec4s}}>;
{{bindings}}
var<workgroup> tile: array<{{unit}}, 1024>;

fn p(i: u32) -> u32 {
    return params[i / 4u][i % 4u];
}

// The tile's cell of (row, column), rotated by the row: a row's 32 cells
// and a column's fall in 32 different banks.
fn cell(row: u32, column: u32) -> u32 {
    return row * TILE + ((column + row) % TILE);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wid.x + wid.y * groups.x;
    let count = p(0u);
    var slot = 0u;
    var r = HEADER;
    loop {
        if (slot >= count) {
            return;
        }
        r = HEADER + slot * RECORD;
        if (group >= p(r) && group < p(r) + p(r + 1u)) {
            break;
        }
        slot += 1u;
    }
    let tiles_read = p(r + 2u);
    let tiles_write = p(r + 3u);
    let read_axis = p(r + 4u);
    let write_axis = p(r + 5u);
    let rank = p(r + 6u);
    let t = group - p(r);
    let write0 = (t % tiles_write) * TILE;
    let read0 = ((t / tiles_write) % tiles_read) * TILE;
    // The tile's batch: every dimension but the two axes, innermost last.
    var rest = t / (tiles_write * tiles_read);
    var read_at = p(r + 7u) + p(r + 9u);
    var write_at = p(r + 8u) + p(r + 10u);
    for (var j = rank; j > 0u; j -= 1u) {
        let k = j - 1u;
        if (k != read_axis && k != write_axis) {
            let d = p(r + 12u + k);
            let i = rest % d;
            rest /= d;
            read_at += i * p(r + 20u + k);
            write_at += i * p(r + 28u + k);
        }
    }
    let read_dim = p(r + 12u + read_axis);
    let write_dim = p(r + 12u + write_axis);
    let x = lid % TILE;
    let y = lid / TILE;
    // Loads: lane x on read index read0 + x (the read axis, contiguous in
    // the source), each pass a row of the write axis.
    let read_step = p(r + 20u + read_axis);
    let across_read = p(r + 20u + write_axis);
    for (var k = 0u; k < TILE; k += ROWS) {
        let w = write0 + y + k;
        let i = read0 + x;
        if (w < write_dim && i < read_dim) {
            tile[cell(y + k, x)] = load(slot, read_at + i * read_step + w * across_read);
        }
    }
    workgroupBarrier();
    // Stores: lane x on write index write0 + x (the write axis, contiguous
    // in the destination), each pass a row of the read axis.
    let write_step = p(r + 28u + write_axis);
    let across_write = p(r + 28u + read_axis);
    for (var k = 0u; k < TILE; k += ROWS) {
        let i = read0 + y + k;
        let w = write0 + x;
        if (w < write_dim && i < read_dim) {
            store(slot, write_at + w * write_step + i * across_write, tile[cell(x, y + k)]);
        }
    }
}

//#fragment split_bindings
@group(0) @binding(1) var<storage, {{src_access}}> src: array<{{unit}}>;
{{destinations}}
fn load(slot: u32, i: u32) -> {{unit}} {
    return src[i];
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
        case {{slot}}u: { dst{{slot}}[i] = v; }

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
    dst[i] = v;
}

//#fragment concat_piece
@group(0) @binding({{binding}}) var<storage, {{access}}> piece{{slot}}: array<{{unit}}>;

//#fragment concat_load
        case {{slot}}u: { return piece{{slot}}[i]; }
