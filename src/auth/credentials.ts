// What a route declares about its callers: the credential kinds it accepts and the access the HTTP
// layer resolves before its handler runs (auth/route-access.ts).

/**
 * Credential kinds a route accepts: 'token' (T), 'key' (K), 'device' (a terminal's device token),
 * 'none'.
 */
export type CredentialKind = 'token' | 'key' | 'device' | 'none'

/**
 * What the caller must be allowed to reach, resolved once per request before the handler:
 * - 'none': no credential at all (health, OpenAPI, terminal registration);
 * - 'caller': any accepted credential; the handler scopes by the principal itself (listings);
 * - 'org-admin': an identity token of an admin of the :org_id organization;
 * - 'project' / 'tenant-project': the :project_id project (the latter on a tenant-managed environment);
 * - 'device' / 'tenant-device': the :device_id device and its project (likewise);
 * - 'terminal': the calling terminal's own project (Device-Com, device token);
 * - 'end-user': an identity token whose subject administers no organization (a person enrolling
 *   themselves); the handler scopes by the subject;
 * - 'operator': an identity token of a platform operator (an admin of a platform organization).
 */
export type Access = 'none' | 'caller' | 'org-admin' | 'project' | 'tenant-project' | 'device' | 'tenant-device' | 'terminal' | 'end-user' | 'operator'

/** Accesses that reach one project, which a rate-limited route charges. */
export const PROJECT_ACCESS: readonly Access[] = ['project', 'tenant-project', 'device', 'tenant-device', 'terminal']
/** Accesses whose routes are rate limited: a project's, and a person's own (counted per subject). */
export const RATE_LIMITED_ACCESS: readonly Access[] = [...PROJECT_ACCESS, 'end-user']
