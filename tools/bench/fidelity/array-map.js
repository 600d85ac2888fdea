// Fidelity case: a helper called through Array.prototype.map builds records.
// Culprit: toRecord (alloc_space).
function toRecord(value, index) {
  return { index, value, label: 'row-' + index, cells: [value, value * 2, value * 3] };
}

export default {
  fetch(request) {
    const values = [];
    for (let i = 0; i < 200; ++i) values.push(i);
    const rows = values.map(toRecord);
    return new Response(String(rows.length));
  },
};
