/**
 * What this thread allocated while a load ran, from V8's own record of its garbage collections (`v8.GCProfiler`):
 * the heap's used size before each collection, less what the collection before left, summed. Unlike a CPU
 * profile's shares or a run's rate, this figure barely moves with the machine's load, so a change that allocates
 * less shows as less from one run to the next. The devices' worker thread has a heap of its own, not counted.
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';

export interface Allocation {
  /** Bytes allocated in all. */
  bytes: number;
  /** Young-generation collections (scavenges) and full ones (mark-compact), and their pauses in all. */
  scavenges: number;
  fullCollections: number;
  pauseMs: number;
}

export class AllocationMeter {
  private readonly profiler = new GCProfiler();
  private startUsed = 0;

  start(): void {
    this.startUsed = usedHeap();
    this.profiler.start();
  }

  stop(): Allocation {
    const endUsed = usedHeap();
    const { statistics } = this.profiler.stop();
    let bytes = 0;
    let left = this.startUsed;
    let scavenges = 0;
    let fullCollections = 0;
    let pauseMs = 0;
    for (const gc of statistics) {
      bytes += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - left);
      left = gc.afterGC.heapStatistics.usedHeapSize;
      if (gc.gcType === 'Scavenge' || gc.gcType.startsWith('Minor')) scavenges += 1;
      else if (gc.gcType === 'MarkSweepCompact') fullCollections += 1;
      pauseMs += gc.cost / 1000;
    }
    bytes += Math.max(0, endUsed - left);
    return { bytes, scavenges, fullCollections, pauseMs };
  }
}

/** The heap's used size as the collections' record gives it (V8's heap statistics). */
function usedHeap(): number {
  return getHeapStatistics().used_heap_size;
}
