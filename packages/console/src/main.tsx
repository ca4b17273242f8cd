import { render } from 'preact'
import { App } from './app'
import { startSession } from './session'
import './style.css'

render(<App />, document.getElementById('app')!)
void startSession()
