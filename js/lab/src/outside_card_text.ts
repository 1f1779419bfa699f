/** The outside approval card's words (no JupyterLab import, so vitest loads it in jsdom). */

/** The notebook and what is asked, the path said once (a title may name it already:
 *  "create the notebook made.ipynb"). */
export function cardHeading(request: { path: string; title: string }): string {
  return !request.path || request.title.includes(request.path) ? request.title : `${request.path}: ${request.title}`;
}
