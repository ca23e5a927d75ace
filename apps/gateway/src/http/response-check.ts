// Holds routes to what they document: each response's status must be one the route spec declares, and
// a JSON body must match the declared schema. The test suite turns it on (GatewayDeps.onResponseMismatch)
// so every response a test receives also checks the OpenAPI document generated from the same specs.
import type { RequestHandler } from 'express';
import type { RouteSpec } from './route.js';

export type MismatchReporter = (problem: string) => void;

export function responseCheck(route: RouteSpec, report: MismatchReporter): RequestHandler {
  return (_req, res, next) => {
    const where = () => `${route.method.toUpperCase()} ${route.path} → ${res.statusCode}`;
    let checked = false;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      checked = true;
      const spec = route.responses[res.statusCode];
      if (!spec) report(`${where()}: status not documented`);
      else if (!spec.schema)
        report(
          `${where()}: a JSON body where the document declares ${spec.contentType ? String(spec.contentType) : 'none'}`,
        );
      else {
        const parsed = spec.schema.safeParse(body);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          report(`${where()}: body does not match its schema at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
        }
      }
      return json(body);
    };
    res.once('finish', () => {
      if (checked) return;
      const spec = route.responses[res.statusCode];
      if (!spec) report(`${where()}: status not documented`);
      else if (spec.schema) report(`${where()}: documented as JSON but answered without res.json`);
    });
    next();
  };
}
