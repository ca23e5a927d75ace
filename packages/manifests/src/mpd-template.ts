// A SegmentTemplate's identifiers (ISO/IEC 23009-1 5.3.9.4.4): $RepresentationID$, $Bandwidth$,
// $Number$ and $Time$ with an optional printf width (%05d), and $$ for a dollar. One expansion for
// the recorder's live windows and the proxy's plan; the width is capped, since `%0999999999d` would
// ask for a string of a gigabyte per segment.

/** The most digits a width may pad a number to (a real template asks for 5 to 10). */
const MAX_WIDTH = 32;

export interface TemplateValues {
  id: string;
  bandwidth: string;
  number?: number;
  time?: number;
}

export function expandTemplate(template: string, values: TemplateValues): string {
  return template.replace(
    /\$(RepresentationID|Bandwidth|Number|Time|)(?:%0(\d+)d)?\$/g,
    (_all, name: string, width: string | undefined) => {
      const value =
        name === 'RepresentationID'
          ? values.id
          : name === 'Bandwidth'
            ? values.bandwidth
            : name === 'Number'
              ? String(values.number ?? '')
              : name === 'Time'
                ? String(values.time ?? '')
                : '$';
      return width && (name === 'Number' || name === 'Time')
        ? value.padStart(Math.min(MAX_WIDTH, Number(width)), '0')
        : value;
    },
  );
}
