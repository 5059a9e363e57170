import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type CallResult, type TestControlPlane } from '@dpp/testkit';
import { epcisSchemaErrors } from '@dpp/testkit/epcis';

const CAPTURE = '/api/v2/epcis/capture';
const EVENTS = '/api/v2/epcis/events';
const EPCIS_CONTEXT = 'https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld';
const EXAMPLE_CONTEXT = { example: 'https://ns.example.com/epcis/' };

type Json = Record<string, unknown>;

/** One event of each type, in eventTime order (GS1 EPCIS 2.0 examples, adapted). */
function fiveEvents(tag: string): Json[] {
  return [
    {
      type: 'ObjectEvent',
      eventID: `urn:uuid:${tag}-0`,
      eventTime: '2026-03-01T10:00:00.000+01:00',
      eventTimeZoneOffset: '+01:00',
      epcList: ['urn:epc:id:sgtin:0614141.107346.2017', 'urn:epc:id:sgtin:0614141.107346.2018'],
      action: 'OBSERVE',
      bizStep: 'shipping',
      disposition: 'in_transit',
      readPoint: { id: 'urn:epc:id:sgln:0614141.07346.1234' },
      bizTransactionList: [{ type: 'po', bizTransaction: 'http://transaction.acme.com/po/12345678' }],
      'example:shipmentLeg': 'outbound',
    },
    {
      type: 'AggregationEvent',
      eventID: `urn:uuid:${tag}-1`,
      eventTime: '2026-03-01T11:00:00Z',
      eventTimeZoneOffset: '+00:00',
      parentID: 'urn:epc:id:sscc:0614141.1234567890',
      childEPCs: ['urn:epc:id:sgtin:0614141.107346.2017'],
      action: 'ADD',
      bizStep: 'packing',
      disposition: 'in_progress',
      readPoint: { id: 'urn:epc:id:sgln:0614141.00777.0' },
    },
    {
      type: 'TransactionEvent',
      eventID: `urn:uuid:${tag}-2`,
      eventTime: '2026-03-01T12:00:00Z',
      eventTimeZoneOffset: '+00:00',
      bizTransactionList: [{ type: 'inv', bizTransaction: 'urn:epcglobal:cbv:bt:0614141000005:1152' }],
      epcList: ['urn:epc:id:sgtin:0614141.107346.2018'],
      action: 'ADD',
      bizStep: 'shipping',
    },
    {
      type: 'TransformationEvent',
      eventID: `urn:uuid:${tag}-3`,
      eventTime: '2026-03-01T13:00:00Z',
      eventTimeZoneOffset: '+00:00',
      inputEPCList: ['urn:epc:id:sgtin:4012345.011122.25'],
      inputQuantityList: [{ epcClass: 'urn:epc:class:lgtin:4012345.011111.4444', quantity: 10, uom: 'KGM' }],
      outputEPCList: ['urn:epc:id:sgtin:4012345.077889.25'],
      bizStep: 'commissioning',
      ilmd: { 'example:bestBefore': '2027-01-01' },
    },
    {
      type: 'AssociationEvent',
      eventID: `urn:uuid:${tag}-4`,
      eventTime: '2026-03-01T14:00:00Z',
      eventTimeZoneOffset: '+00:00',
      parentID: 'urn:epc:id:grai:4012345.55555.987',
      childEPCs: ['urn:epc:id:giai:4000001.12345'],
      action: 'ADD',
      bizStep: 'assembling',
      readPoint: { id: 'urn:epc:id:sgln:4012345.00001.0' },
    },
  ];
}

function documentOf(eventList: Json[]): Json {
  return {
    '@context': [EPCIS_CONTEXT, EXAMPLE_CONTEXT],
    type: 'EPCISDocument',
    schemaVersion: '2.0',
    creationDate: '2026-03-01T15:00:00Z',
    epcisBody: { eventList },
  };
}

describe.each(testDialects())('EPCIS capture and query (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  const tag = randomUUID();
  let captured: Json[];

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    key = t.tenants.a.admin;
    captured = fiveEvents(tag);
  });
  afterAll(() => t?.close());

  const eventList = (body: { epcisBody: { queryResults: { resultsBody: { eventList: Json[] } } } }) =>
    body.epcisBody.queryResults.resultsBody.eventList;
  const query = async (q: string, k = key) => {
    const res = await t.call('GET', `${EVENTS}?${q}`, { key: k });
    expect(res.status, res.text).toBe(200);
    expect(epcisSchemaErrors(res.body)).toEqual([]);
    return res;
  };
  const storedCount = async () =>
    (
      await t.cp.store.db
        .selectFrom('epcis_events')
        .select('id')
        .where('tenant_id', '=', t.tenants.a.id)
        .execute()
    ).length;

  it('captures a schema-valid document of all five event types: 202 with the capture job', async () => {
    const doc = documentOf(captured);
    expect(epcisSchemaErrors(doc)).toEqual([]);
    const res = await t.call('POST', CAPTURE, {
      key,
      body: doc,
      headers: { 'content-type': 'application/ld+json' },
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      captureID: expect.any(String),
      createdAt: expect.any(String),
      finishedAt: expect.any(String),
      running: false,
      success: true,
      captureErrorBehaviour: 'rollback',
      errors: [],
      eventCount: 5,
      storedCount: 5,
      duplicateCount: 0,
    });
    expect(res.headers.get('location')).toBe(`/api/v2/epcis/capture/${res.body.captureID}`);
    const job = await t.call('GET', res.headers.get('location')!, { key });
    expect(job.body).toEqual(res.body);
    expect((await t.call('GET', res.headers.get('location')!, { key: t.tenants.b.admin })).status).toBe(404);
  });

  it('returns them as a schema-valid EPCISQueryDocument in eventTime order, as captured', async () => {
    const res = await query('');
    expect(res.body).toMatchObject({
      '@context': [EPCIS_CONTEXT],
      type: 'EPCISQueryDocument',
      schemaVersion: '2.0',
      epcisBody: { queryResults: { queryName: 'SimpleEventQuery' } },
    });
    const list = eventList(res.body);
    expect(list.map((e) => e.eventID)).toEqual(captured.map((e) => e.eventID));
    for (const [i, e] of list.entries()) {
      // The capture's extra context travels with each event; recordTime is the repository's.
      expect(e).toEqual({ '@context': [EXAMPLE_CONTEXT], ...captured[i], recordTime: expect.any(String) });
    }
  });

  it('stores an eventID once: capturing the same document again stores nothing new', async () => {
    const res = await t.call('POST', CAPTURE, { key, body: documentOf(captured) });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ eventCount: 5, storedCount: 0, duplicateCount: 5 });
    expect(eventList((await query('')).body)).toHaveLength(5);
  });

  it('gives an event without eventID a urn:uuid one and stores CBV URIs as short names', async () => {
    const event = {
      type: 'ObjectEvent',
      eventTime: '2026-04-01T08:00:00.123456-05:00',
      eventTimeZoneOffset: '-05:00',
      epcList: ['urn:epc:id:sgtin:0614141.107346.3001'],
      action: 'ADD',
      bizStep: 'urn:epcglobal:cbv:bizstep:commissioning',
      disposition: 'https://ns.gs1.org/cbv/Disp-active',
      readPoint: { id: 'https://id.example.com/414/9520123456788' },
    };
    const doc = { ...documentOf([event]), '@context': EPCIS_CONTEXT };
    const res = await t.call('POST', CAPTURE, { key, body: doc });
    expect(res.status, res.text).toBe(202);
    const list = eventList((await query(`epc=${encodeURIComponent(event.epcList[0]!)}`)).body);
    expect(list).toEqual([
      {
        ...event,
        bizStep: 'commissioning',
        disposition: 'active',
        eventID: expect.stringMatching(/^urn:uuid:[0-9a-f-]{36}$/),
        recordTime: res.body.createdAt,
      },
    ]);
  });

  it('filters by eventType, epc, bizStep and eventTime, and pages with Link rel="next"', async () => {
    const ids = (res: CallResult) => eventList(res.body).map((e) => e.eventID);
    const id = (i: number) => captured[i]!.eventID;
    expect(ids(await query('eventType=AggregationEvent'))).toEqual([id(1)]);
    expect(ids(await query('eventType=ObjectEvent,TransactionEvent&bizStep=shipping'))).toEqual([
      id(0),
      id(2),
    ]);
    expect(ids(await query('epc=urn:epc:id:sgtin:0614141.107346.2018'))).toEqual([id(0), id(2)]);
    expect(ids(await query('epc=urn:epc:id:sgtin:0614141.107346.2017'))).toEqual([id(0), id(1)]);
    expect(ids(await query('epc=urn:epc:id:grai:4012345.55555.987'))).toEqual([id(4)]);
    expect(ids(await query('epc=urn:epc:id:sgtin:4012345.077889.25'))).toEqual([id(3)]);
    expect(
      ids(await query(`bizStep=${encodeURIComponent('https://ns.gs1.org/cbv/BizStep-packing')}`)),
    ).toEqual([id(1)]);
    // 10:00+01:00 is 09:00Z: GE 09:00Z includes it; LT 12:00Z excludes the TransactionEvent.
    expect(
      ids(
        await query(
          'GE_eventTime=2026-03-01T09:00:00Z&LT_eventTime=2026-03-01T12:00:00Z&eventType=ObjectEvent,AggregationEvent,TransactionEvent',
        ),
      ),
    ).toEqual([id(0), id(1)]);
    expect(
      ids(await query('GE_eventTime=2026-03-01T10:00:00%2B02:00&LT_eventTime=2026-03-01T11:00:00Z')),
    ).toEqual([id(0)]);

    const seen: unknown[] = [];
    let next: string | null =
      `${EVENTS}?GE_eventTime=2026-03-01T00:00:00Z&LT_eventTime=2026-03-02T00:00:00Z&perPage=2`;
    let pages = 0;
    while (next) {
      const res = await t.call('GET', next, { key });
      expect(res.status).toBe(200);
      seen.push(...eventList(res.body).map((e) => e.eventID));
      const link = res.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(captured.map((e) => e.eventID));
  });

  it("keeps each workspace's events to itself", async () => {
    expect(eventList((await query('', t.tenants.b.admin)).body)).toEqual([]);
  });

  it('refuses invalid documents with 400 VALIDATION_ERROR naming the path, storing nothing', async () => {
    const ev = (i: number, patch: Json, drop: string[] = []): Json[] =>
      fiveEvents(randomUUID()).map((e, j) => {
        if (j !== i) return e;
        const out: Json = { ...e, ...patch };
        for (const k of drop) delete out[k];
        return out;
      });
    const doc = (list: Json[], patch: Json = {}) => ({ ...documentOf(list), ...patch });
    // [document, field, whether the EPCIS JSON Schema refuses it too]
    const cases: [Json, string, boolean][] = [
      [doc(ev(0, {}, ['eventTimeZoneOffset'])), 'epcisBody.eventList[0].eventTimeZoneOffset', true],
      [doc(ev(0, { eventTimeZoneOffset: '+15:00' })), 'epcisBody.eventList[0].eventTimeZoneOffset', true],
      [doc(ev(0, { action: 'CREATE' })), 'epcisBody.eventList[0].action', true],
      [doc(ev(0, { eventTime: '2026-03-01T10:00:00' })), 'epcisBody.eventList[0].eventTime', true],
      [doc(ev(0, { epcList: ['not an epc'] })), 'epcisBody.eventList[0].epcList[0]', true],
      [
        doc(ev(0, { epcList: ['urn:epc:id:sgtin:0614141.10734.1'] })),
        'epcisBody.eventList[0].epcList[0]',
        false,
      ],
      [doc(ev(0, { epcList: ['urn:x:1', 'urn:x:1'] })), 'epcisBody.eventList[0].epcList[0]', true],
      [doc(ev(0, { bizStep: 'shiping' })), 'epcisBody.eventList[0].bizStep', true],
      [doc(ev(0, { bizStep: 'urn:epcglobal:cbv:bizstep:shiping' })), 'epcisBody.eventList[0].bizStep', true],
      [doc(ev(0, { colour: 'red' })), 'epcisBody.eventList[0].colour', true],
      [doc(ev(0, {}, ['epcList'])), 'epcisBody.eventList[0]', true],
      [doc(ev(0, { ilmd: { 'example:lot': 'L1' } })), 'epcisBody.eventList[0]', true],
      [doc(ev(1, { type: 'ThingEvent' })), 'epcisBody.eventList[1].type', true],
      [doc(ev(1, {}, ['action'])), 'epcisBody.eventList[1].action', true],
      [doc(ev(2, {}, ['bizTransactionList'])), 'epcisBody.eventList[2].bizTransactionList', true],
      [doc(ev(3, {}, ['outputEPCList'])), 'epcisBody.eventList[3]', true],
      [doc(ev(4, {}, ['parentID'])), 'epcisBody.eventList[4].parentID', true],
      [doc(ev(0, {}), { type: 'EPCISQueryDocument' }), 'type', true],
      [doc(ev(0, {}), { schemaVersion: '1.2' }), 'schemaVersion', false],
      [doc(ev(0, {}), { '@context': undefined }), '@context', true],
      [doc([]), 'epcisBody.eventList', false],
    ];
    const before = await storedCount();
    for (const [body, field, schemaRefuses] of cases) {
      const res = await t.call('POST', CAPTURE, { key, body });
      expect(res.status, field).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.field, res.text).toBe(field);
      expect(epcisSchemaErrors(body).length > 0, `schema verdict for ${field}`).toBe(schemaRefuses);
    }
    expect(await storedCount()).toBe(before);
  });

  it('requires epcis:capture to capture and epcis:query to query', async () => {
    const capture = await t.call('POST', CAPTURE, {
      key: t.tenants.a.readOnly,
      body: documentOf(fiveEvents('x')),
    });
    expect(capture.status).toBe(403);
    expect(capture.body.error.details.required).toBe('epcis:capture');
    const read = await t.call('GET', EVENTS, { key: t.tenants.a.readOnly });
    expect(read.status).toBe(403);
    expect(read.body.error.details.required).toBe('epcis:query');
  });

  it('refuses bad query parameters with 400', async () => {
    for (const [q, field] of [
      ['eventType=ObjectEvent,ThingEvent', 'eventType[1]'],
      ['bizStep=shiping', 'bizStep'],
      ['GE_eventTime=yesterday', 'GE_eventTime'],
      ['perPage=0', 'perPage'],
      ['nextPageToken=garbage', 'nextPageToken'],
    ]) {
      const res = await t.call('GET', `${EVENTS}?${q}`, { key });
      expect(res.status, q).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
  });
});
