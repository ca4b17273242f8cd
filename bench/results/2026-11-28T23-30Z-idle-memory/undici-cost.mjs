import v8 from 'node:v8'; import vm from 'node:vm'
v8.setFlagsFromString('--expose-gc'); const gc = vm.runInNewContext('gc')
const rss = () => (process.memoryUsage.rss()/1048576).toFixed(1); const heap = () => (v8.getHeapStatistics().used_heap_size/1048576).toFixed(1)
await import('node:http'); await import('node:tls'); gc(); gc()
console.log('before', rss(), heap())
const u = await import('undici'); new u.Agent(); gc(); gc()
console.log('after import', rss(), heap())
