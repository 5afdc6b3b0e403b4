import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { createTransport } from '../lib/transport';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

mount(App, { target, props: { api: createTransport() } });
