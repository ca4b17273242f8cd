import { render } from 'preact'
import { App } from './app'
import { startSession } from './session'
import './style.css'

render(<App />, document.getElementById('app')!)
void startSession()
// A sign-in link opened in a tab that already shows the console changes only the fragment: no reload.
addEventListener('hashchange', () => {
  if (location.hash.includes('sign-in=')) void startSession()
})
