/**
 * Removes the whitespace Postgres puts between JSON tokens (`"key" : value, …`) without parsing the
 * document, so numbers keep their exact digits (a parse would round `numeric` values through a double).
 * Whitespace inside strings is kept. A readAll of 50 configurations × 5 games shrinks by about a fifth.
 */
export function compactJson(json: string): string {
  let out = '';
  let start = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const char = json.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x20 || char === 0x0a || char === 0x0d || char === 0x09) {
      out += json.slice(start, i);
      start = i + 1;
    }
  }
  return out + json.slice(start);
}
