// Devices (spec "Devices and enrollment sessions"): list a project's terminals, link a registered
// terminal with its registration code, rename or enable/disable one.
import { changeDevice, completeRegistration, listDevices } from '../../domain/devices/devices.js'
import { DeviceModeSchema, deviceResource, DeviceSchema } from '../resources/devices.js'
import { defineRoute, type Route } from '../route.js'
import { Body, Pagination, PathIds, Text, Type } from '../schema.js'

const tags = ['Devices']

export const deviceRoutes: Route[] = [
  defineRoute({
    operationId: 'listDevices',
    method: 'get',
    path: '/v1/projects/:project_id/devices',
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary: "List the project's devices, oldest first",
    params: PathIds('project_id'),
    query: Type.Object(Pagination(100), { additionalProperties: false }),
    responses: [
      {
        status: 200,
        description: 'one page of devices and the total count',
        schema: Type.Object({ devices: Type.Array(DeviceSchema), total: Type.Integer() }),
      },
    ],
    async handler(context) {
      const { project } = context
      const { rows, total } = await listDevices(context.app.sql, project.id, context.query)
      return { devices: rows.map(deviceResource), total }
    },
  }),
  defineRoute({
    operationId: 'linkDevice',
    method: 'post',
    path: '/v1/projects/:project_id/device/android/complete_registration',
    auth: ['token', 'key'],
    access: 'project',
    tags,
    rateLimited: true,
    summary:
      'Link a registered terminal (POST /v1/device-com/registration) to the project with its registration code (8 characters, single use, valid 15 minutes). Only a sandbox-plan project may do it (403 sandbox_required); an unknown, used or expired code is 422 registration_code_invalid',
    params: PathIds('project_id'),
    body: Body({
      registration_code: Text({ minLength: 1, maxLength: 64, description: 'the code the terminal shows; case-insensitive' }),
      device_name: Text({ minLength: 1, maxLength: 200 }),
      device_mode: DeviceModeSchema,
    }),
    responses: [
      { status: 200, description: "linked: the terminal's device token now reaches this project", schema: Type.Object({}) },
      { status: 422, description: 'registration_code_invalid: unknown, used or expired code' },
    ],
    async handler(context) {
      await completeRegistration(context.app, context.project, context.body)
      return {}
    },
  }),
  defineRoute({
    operationId: 'updateDevice',
    method: 'patch',
    path: '/v1/device/:device_id',
    auth: ['token', 'key'],
    access: 'device',
    tags,
    rateLimited: true,
    summary: "Rename a device, or enable/disable it (a disabled terminal's device token is refused at once)",
    params: PathIds('device_id'),
    body: Body({
      name: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
      enabled: Type.Optional(Type.Boolean()),
    }),
    responses: [{ status: 200, description: 'the device', schema: DeviceSchema }],
    async handler(context) {
      const { device } = context
      return deviceResource(await changeDevice(context.app.sql, device.id, context.body))
    },
  }),
]
