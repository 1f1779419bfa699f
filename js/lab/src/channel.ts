/**
 * One notebook's comm with the kernel's ``LabChannel`` (jupyter_brain/notebook/lab_channel.py).
 *
 * The kernel opens a comm to ``jupyter_brain.lab`` at ``%load_ext jupyter_brain``; when a
 * notebook connects to a kernel (page reload, kernel change) this side opens one to the
 * kernel's ``jupyter_brain.kernel`` target, which the kernel closes again if jupyter_brain
 * is not loaded there. Either way the newest open comm is the one used.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { FRONTEND_TARGET, IReply, KERNEL_TARGET, PendingRequests, VERSION } from './protocol';

export type KernelMessageData = { type?: string; [key: string]: unknown };

export class KernelChannel {
  readonly received = new Signal<KernelChannel, KernelMessageData>(this);
  private _comm: Kernel.IComm | null = null;
  private _pending = new PendingRequests();
  private _kernel: Kernel.IKernelConnection | null = null;

  constructor(private _session: ISessionContext) {
    _session.kernelChanged.connect(this._onKernelChanged, this);
    void _session.ready.then(() => this._attach(_session.session?.kernel ?? null));
  }

  get connected(): boolean {
    return this._comm !== null && !this._comm.isDisposed;
  }

  /** Ask the kernel; the reply (or an error saying why there is none) resolves it. */
  request(data: KernelMessageData): Promise<IReply> {
    if (!this.connected) {
      return Promise.resolve({
        type: 'error',
        request_id: 0,
        error: 'jupyter_brain is not loaded in this kernel: run %load_ext jupyter_brain first.'
      });
    }
    const [id, reply] = this._pending.create();
    this._comm!.send({ ...data, request_id: id } as any);
    return reply;
  }

  dispose(): void {
    this._session.kernelChanged.disconnect(this._onKernelChanged, this);
    this._pending.failAll('The notebook was closed.');
    this._comm = null;
    Signal.clearData(this);
  }

  private _onKernelChanged(_: ISessionContext, change: { newValue: Kernel.IKernelConnection | null }): void {
    this._attach(change.newValue);
  }

  private _attach(kernel: Kernel.IKernelConnection | null): void {
    if (!kernel || kernel === this._kernel) {
      return;
    }
    this._kernel = kernel;
    this._comm = null;
    this._pending.failAll('The kernel changed.');
    kernel.registerCommTarget(FRONTEND_TARGET, (comm: Kernel.IComm) => {
      this._use(comm);
      comm.send({ type: 'ready', version: VERSION });
    });
    try {
      const comm = kernel.createComm(KERNEL_TARGET);
      this._use(comm);
      comm.open({ type: 'ready', version: VERSION });
    } catch (err) {
      console.debug('jupyter-brain: no comm to the kernel yet', err);
    }
  }

  private _use(comm: Kernel.IComm): void {
    this._comm = comm;
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      const data = (msg.content.data ?? {}) as KernelMessageData;
      if (typeof data.request_id === 'number' && String(data.type).endsWith('_reply')) {
        this._pending.resolve(data as unknown as IReply);
        return;
      }
      this.received.emit(data);
    };
    comm.onClose = () => {
      if (this._comm === comm) {
        this._comm = null;
        this._pending.failAll('The kernel closed the connection (jupyter_brain is not loaded there).');
      }
    };
  }
}
