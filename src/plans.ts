// Project plans (DECISIONS.md "Tenancy and control"): rate per minute, headcount, daily requests.
export const PLANS = {
  sandbox: { id: 'sandbox', name: 'Sandbox', requestsPerMinute: 5, headcount: 100, dailyRequestLimit: 1_000 },
  business: { id: 'business', name: 'Business', requestsPerMinute: 100, headcount: 10_000, dailyRequestLimit: 100_000 },
  enterprise: { id: 'enterprise', name: 'Enterprise', requestsPerMinute: 5_000, headcount: 1_000_000, dailyRequestLimit: 10_000_000 },
} as const

export type PlanId = keyof typeof PLANS
export const PLAN_IDS = Object.keys(PLANS) as PlanId[]
