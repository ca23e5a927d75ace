// OpenAPI links: how one answer feeds the next request (extract → download → job → artifact and
// events), so generated clients and API testers can follow the flow from the document alone.
// Keyed by "method path status"; targets are operationIds, checked against the document by its test.

interface Link {
  operationId: string;
  description: string;
  parameters?: Record<string, string>;
  requestBody?: Record<string, string>;
}

const toDownload: Record<string, Link> = {
  download: {
    operationId: 'postApiV1Download',
    description:
      "Download a source of the answer: its url (the first item's first source here; any source's url works) with the answer's extraction_id",
    requestBody: {
      url: '{$response.body#/data/media/0/sources/0/url}',
      extraction_id: '{$response.body#/data/extraction_id}',
    },
  },
};

const ofJob = (pointer: string): Record<string, Link> => ({
  events: {
    operationId: 'getApiV1JobsIdEvents',
    description: "Follow the job's progress as server-sent events",
    parameters: { id: `$response.body#${pointer}` },
  },
});

export const LINKS: Record<string, Record<string, Link>> = {
  'post /api/v1/extract 200': toDownload,
  'post /api 200': toDownload,
  'post /api/playground 200': toDownload,
  'post /api/v1/download 202': {
    job: {
      operationId: 'getApiV1JobsId',
      description: 'Poll the job this download started',
      parameters: { id: '$response.body#/data/job_id' },
    },
    ...ofJob('/data/job_id'),
  },
  'get /api/v1/jobs/{id} 200': {
    artifact: {
      operationId: 'getApiV1JobsIdArtifact',
      description: "The job's file, once its status is completed",
      parameters: { id: '$response.body#/data/id' },
    },
    ...ofJob('/data/id'),
  },
};
