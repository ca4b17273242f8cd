// The organization admin's calls on the benchmark's environment (PATCH its settings, GET its
// accuracy), as the bench's other phases make them: any answer but 200 stops the run.

/**
 * @param {{ url: string, token: string, orgId: string, environmentId: string }} input
 * @returns {{ patch: (body: object) => Promise<any>, get: (suffix?: string) => Promise<any> }}
 */
export function environmentAdmin(input) {
  const path = `${input.url}/v1/organization/${input.orgId}/environments/${input.environmentId}`
  const call = async (method, url, body) => {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${input.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body && JSON.stringify(body),
    })
    if (response.status !== 200) throw new Error(`${method} ${url} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
  return {
    patch: (body) => call('PATCH', path, body),
    get: (suffix = '') => call('GET', `${path}${suffix}`),
  }
}
