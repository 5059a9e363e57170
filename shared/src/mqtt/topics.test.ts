import { describe, expect, it } from 'vitest';
import { deviceTopics, isWithinDeviceSubtree, parseDeviceTopic } from './topics.js';

describe('device topics', () => {
  const t = deviceTopics('t1', 'd1');
  it('builds every topic under the device prefix', () => {
    expect(t.workNotice).toBe('dpp/t1/devices/d1/notices/work');
    expect(t.presence).toBe('dpp/t1/devices/d1/presence');
    expect(t.printerStatus('zebra-1')).toBe('dpp/t1/devices/d1/printers/zebra-1/status');
    expect(() => t.printerStatus('a/b')).toThrow();
    expect(() => t.printerStatus('#')).toThrow();
  });

  it('parses device topics and nothing else', () => {
    expect(parseDeviceTopic('dpp/t1/devices/d1/presence')).toEqual({
      tenantId: 't1',
      deviceId: 'd1',
      rest: 'presence',
    });
    expect(parseDeviceTopic('dpp/t1/devices/d1')).toBeNull();
    expect(parseDeviceTopic('other/t1/devices/d1/x')).toBeNull();
  });

  it.each([
    ['dpp/t1/devices/d1/presence', true],
    ['dpp/t1/devices/d1/#', true],
    ['dpp/t1/devices/d1/printers/+/status', true],
    ['dpp/t1/devices/d2/presence', false],
    ['dpp/t1/devices/+/presence', false],
    ['dpp/t1/#', false],
    ['dpp/+/devices/d1/presence', false],
    ['#', false],
    ['dpp/t1/devices/d1/', false],
  ])('keeps %s inside the subtree: %s', (topic, ok) => {
    expect(isWithinDeviceSubtree(topic, 't1', 'd1')).toBe(ok);
  });
});
