// usage: node compare-rejects.cjs <exact rejects.ndjson> <other rejects.ndjson> -> refusals of each, identical ones (line, code and detail: the hand and score), and the lines only one refused
const fs=require('fs'); const read=(f)=>fs.readFileSync(f,'utf8').trim().split('\n').filter(Boolean).map(JSON.parse)
const a=read(process.argv[2]), b=read(process.argv[3])
const key=(r)=>r.line+' '+r.code+' '+r.detail
const sa=new Set(a.map(key)), sb=new Set(b.map(key))
const onlyA=a.filter(r=>!sb.has(key(r))), onlyB=b.filter(r=>!sa.has(key(r)))
console.log(JSON.stringify({exact_refused:a.length, other_refused:b.length, identical:a.length-onlyA.length, only_exact:onlyA.map(r=>r.line+': '+r.detail), only_other:onlyB.map(r=>r.line+': '+r.detail)},null,1))
