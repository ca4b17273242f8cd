// Runs `tick` every `ms` while the page is visible: a hidden tab asks the service nothing, and
// coming back asks at once, then every `ms` again. (The caller loads once on mount itself.)
import { useEffect } from 'preact/hooks'

export function useVisibleInterval(tick: () => void, ms: number) {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null
    const stop = () => {
      if (timer !== null) clearInterval(timer)
      timer = null
    }
    const follow = (change?: Event) => {
      stop()
      if (document.hidden) return
      if (change) tick()
      timer = setInterval(tick, ms)
    }
    follow()
    document.addEventListener('visibilitychange', follow)
    return () => {
      stop()
      document.removeEventListener('visibilitychange', follow)
    }
  }, [tick, ms])
}
