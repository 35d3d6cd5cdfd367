// The prelude of every kernel's module, filled by src/kernels/wgsl.rs
// from the Rust values: the shared constants, the parameter table (its
// members generated from TableHeader / TableEntry, src/kernels/table.rs), the source
// binding (the tensor: read-only for a split, or read_write where a
// destination shares the input's buffer; written by a concat) and one
// destination binding per slot (the pieces: written by a split, read by a
// concat), numbered by kernels::wgsl::Bindings, and the module's one entry
// point `split`.
//
// Every kernel moves raw bits: values never pass through float registers,
// so NaN payloads, -0.0 and padding survive. No optional feature (f16,
// int64, subgroups) is used.

//#fragment prelude
// Kernel {{kernel}}, outputs {{placement}}, {{slots}} destination slot(s).
const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;
const UNIT_BITS: u32 = {{unit_bits}}u;
const UNITS_PER_INVOCATION: u32 = {{units_per_invocation}}u;
const FLAG_PAD: u32 = {{flag_pad}}u;
const FLAG_ALIGNED: u32 = {{flag_aligned}}u;
const FLAG_SKIP: u32 = {{flag_skip}}u;

struct Entry {
{{entry_fields}}}

struct Table {
{{header_fields}}    entries: {{entries}},
}

@group(0) @binding({{table_binding}}) var<{{table_space}}> table: Table;
@group(0) @binding({{source_binding}}) var<storage, {{source_access}}> {{source}}: array<{{unit}}>;
{{destinations}}
// The caller's offsets need not be multiples of the binding alignment:
// each binding starts at its offset aligned down and ends where its window
// ends, so the shift is the binding's length less the window's units that
// the table holds. Tables depend on the plan alone, never on the offsets.
// {{shifts}}

// Bits the source binding starts before the source window.
fn source_shift_bits() -> u32 {
    return {{source_shift}};
}
{{bound_entries}}{{trace}}
// Every load and store of the module's kernel goes through these accessors,
// each call site numbered (`site`), so that the module's trace variant can
// record what every invocation touches (src/plan/coalescing.rs); elsewhere they
// are plain accesses that the compilers inline.
fn ld_src(site: u32, i: u32) -> {{unit}} {
{{record_src}}    return {{source}}[i];
}
{{source_word}}{{accessors}}
// The invocation's index in the dispatch (a 2-D grid past 65535 workgroups).
fn invocation_index(wid: vec3<u32>, groups: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
}

// True when this dispatch writes table entry `j`: FLAG_SKIP leaves it to
// another dispatch of the pass (where two destinations' bindings would
// overlap in one buffer).
fn writes(j: u32) -> bool {
    return (table.entries[j].flags & FLAG_SKIP) == 0u;
}

//#fragment field
    {{name}}: u32,
//#fragment destination
@group(0) @binding({{binding}}) var<storage, {{access}}> {{array}}_{{slot}}: array<{{unit}}>;
//#fragment bound_entry

// Units slot {{slot}}'s binding starts before a window of `window_units`.
fn dst_shift_{{slot}}(window_units: u32) -> u32 {
    return {{dst_shift}};
}

// Entry `e` at this dispatch's bindings, for slot {{slot}}.
fn bound_{{slot}}(e: Entry) -> Entry {
    var b = e;
    b.src_bit = e.src_bit + source_shift_bits();
    b.dst_unit = e.dst_unit + dst_shift_{{slot}}(e.window_units);
    return b;
}
//#fragment read_entry
    let e{{j}} = bound_{{slot}}(table.entries[{{j}}u]);
//#fragment source_word
// Source word `w` (of a vec4 source).
fn ld_src_word(site: u32, w: u32) -> u32 {
{{record}}    return {{source}}[w >> 2u][w & 3u];
}
//#fragment load_slot
fn ld_dst_{{slot}}(site: u32, i: u32) -> {{unit}} {
{{record}}    return {{array}}_{{slot}}[i];
}
//#fragment store_slot
fn st_dst_{{slot}}(site: u32, i: u32, v: {{unit}}) {
{{record}}    {{array}}_{{slot}}[i] = v;
}
//#fragment split_move
// Moves unit `s` of the source into unit `d` of slot {{slot}} (a split).
fn move_{{slot}}(site: u32, d: u32, s: u32) {
    st_dst_{{slot}}(site, d, ld_src(site, s));
}
//#fragment concat_move
// Moves unit `d` of slot {{slot}} into unit `s` of the source (a concat:
// the same units, the other way).
fn move_{{slot}}(site: u32, d: u32, s: u32) {
    st_src(site, s, ld_dst_{{slot}}(site, d));
}
//#fragment store_source
// Writes unit `i` of the source binding (a concat writes the tensor).
fn st_src(site: u32, i: u32, v: {{unit}}) {
{{record}}    {{source}}[i] = v;
}
//#fragment record
    record((site << 11u) | ({{log2_bytes}}u << 8u) | ({{binding}}u << 1u) | {{store}}u, {{index}});
//#fragment trace
// The access trace (this module's diagnostic variant; plans never record
// it): every access of a traced invocation records (code, unit) into one
// more binding. code = site << 11 | log2(bytes) << 8 | binding << 1 | store.
// The binding's header: the first traced invocation, how many are traced,
// the records kept per invocation, and the most any invocation made.
struct Trace {
    first: u32,
    count: u32,
    per_invocation: u32,
    most: atomic<u32>,
    records: array<vec2<u32>>,
}

@group(0) @binding({{trace_binding}}) var<storage, read_write> trace: Trace;
var<private> trace_g: u32;
var<private> trace_n: u32;

fn record(code: u32, unit: u32) {
    let t = trace_g - trace.first;
    if (t < trace.count) {
        if (trace_n < trace.per_invocation) {
            trace.records[t * trace.per_invocation + trace_n] = vec2<u32>(code, unit);
        }
        trace_n += 1u;
        atomicMax(&trace.most, trace_n);
    }
}
//#fragment entry_point
@compute @workgroup_size(WORKGROUP_SIZE)
fn split(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
{{trace_start}}    if (g >= table.invocations) {
        return;
    }
{{body}}}
//#fragment workgroup_entry_point
// Every invocation of the workgroup runs the body (it shares workgroup
// memory behind a barrier, so none may return early).
@compute @workgroup_size(WORKGROUP_SIZE)
fn split(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
{{trace_start}}{{body}}}
//#fragment trace_start
    trace_g = g;
    trace_n = 0u;

