// Fidelity case: a helper called through Array.prototype.map builds records.
// Culprit: toRecord (alloc_space).
const values = Array.from({ length: 200 }, (_, i) => i);

function toRecord(value, index) {
  return { index, value, label: 'row-' + index, cells: [value, value * 2, value * 3] };
}

export default {
  fetch(request) {
    const rows = values.map(toRecord);
    return new Response(String(rows.length));
  },
};
