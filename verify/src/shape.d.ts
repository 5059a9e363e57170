/**
 * Reading the untrusted JSON of a proof: each accessor returns the value or throws Broken naming the field,
 * which the check of that link reports as its reason.
 */
/** Why a link of the proof does not verify (a missing field, a bad signature, two values that differ). */
export declare class Broken extends Error {
    readonly name = "Broken";
}
export type Json = Record<string, unknown>;
export declare function isObject(v: unknown): v is Json;
export declare function obj(v: unknown, what: string): Json;
export declare function str(o: Json, key: string, what: string): string;
export declare function strOrNull(o: Json, key: string, what: string): string | null;
export declare function optStr(o: Json, key: string, what: string): string | undefined;
export declare function int(o: Json, key: string, what: string): number;
/** An RFC 3339 date-time, as milliseconds since the epoch. */
export declare function time(o: Json, key: string, what: string): number;
export declare function timeOrNull(o: Json, key: string, what: string): number | null;
/** Whether `t` lies in the half-open window [from, until); a null `until` is open-ended. */
export declare function inWindow(t: number, from: number, until: number | null): boolean;
