// formal-transformers' Sphinx extension: the filter box above a table of claims (formal:claims) keeps the rows
// whose text contains every word typed; nothing is fetched, so it works from file:// too.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll(".formal-filter input").forEach((input) => {
    input.addEventListener("input", () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      document.querySelectorAll("table.formal-claims tbody tr").forEach((row) => {
        const text = row.textContent.toLowerCase();
        row.hidden = !words.every((w) => text.includes(w));
      });
    });
  });
});
