// The one place that imports uWebSockets.js. The official build is not on the npm registry, so we
// use the unofficial prebuilt package; swapping in the official one is a change to this file only.
import uws from '@trufflesuite/uws-js-unofficial'

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial'

export const App = uws.App
export const closeListenSocket = uws.us_listen_socket_close
export const listenSocketPort = uws.us_socket_local_port
