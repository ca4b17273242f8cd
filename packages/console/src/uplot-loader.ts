// uPlot and its stylesheet, fetched the first time a page draws a chart: the main bundle does not carry them.
export async function loadUplot() {
  const [{ default: UPlot }] = await Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
  return UPlot
}
