// Fidelity case: HTML rows built by string concatenation and templates.
// Culprit: renderRow (alloc_space).
function renderRow(i, request) {
  let cell = '<td>' + i + '</td>';
  cell += `<td>${request.method}</td><td>${request.url}</td>`;
  return '<tr>' + cell.toUpperCase() + '</tr>';
}

export default {
  fetch(request) {
    const rows = [];
    for (let i = 0; i < 100; ++i) rows.push(renderRow(i, request));
    return new Response(rows.join('\n'));
  },
};
