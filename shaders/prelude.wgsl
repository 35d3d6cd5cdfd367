// The prelude of every kernel's module, filled by wgpu_split::plan::wgsl
// from the Rust values: the shared constants, the parameter table (its
// members generated from plan::table::TableHeader / TableEntry), the source
// binding (read-only, or read_write where a destination shares the input's
// buffer) and one destination binding per slot, numbered by
// plan::wgsl::Bindings, and the module's one entry point `split`.
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
{{bound_entries}}
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
@group(0) @binding({{binding}}) var<storage, read_write> {{array}}_{{slot}}: array<{{unit}}>;
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
//#fragment entry_point
@compute @workgroup_size(WORKGROUP_SIZE)
fn split(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let g = invocation_index(wid, groups, lid);
    if (g >= table.invocations) {
        return;
    }
{{body}}}
