import type { EventType } from "@herald/sdk/types";
import { type FormEvent, type RefObject, useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { Link, navigate } from "../router.tsx";
import { Field } from "../ui/Field.tsx";
import { useAction, useResource } from "../ui/hooks.ts";
import { PageHeader } from "../ui/Layout.tsx";
import { ErrorNotice, Loading } from "../ui/Notice.tsx";
import { Time } from "../ui/Time.tsx";
import { forgetEventTypes } from "../ui/useEventTypes.ts";
import { eventTypePath } from "./EventTypes.tsx";
import { SchemaEditor } from "./SchemaEditor.tsx";
import { describeSyntaxError, parseSchemaText } from "./schemaText.ts";

/** The schema box's content as the API wants it, or the reason it cannot be sent yet. */
function schemaToSend(text: string): { schema: Record<string, unknown> | null } | { problem: string } {
  const parsed = parseSchemaText(text);
  if (parsed.kind === "error") return { problem: `Fix the schema first. ${describeSyntaxError(parsed)}` };
  return { schema: parsed.kind === "object" ? parsed.schema : null };
}

export function NewEventType() {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [schemaText, setSchemaText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const create = useAction(async (schema: Record<string, unknown> | null) => {
    const made = await api.post<EventType>("/v3/event-types", {
      name: name.trim(),
      description,
      ...(schema ? { schema } : {}),
    });
    forgetEventTypes();
    navigate(eventTypePath(made.name));
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const send = schemaToSend(schemaText);
    setProblem("problem" in send ? send.problem : null);
    if (!("problem" in send)) void create.run(send.schema);
  };
  const param = create.error?.param;
  const nameInput = useRef<HTMLInputElement>(null);
  useFocusOnFieldError(create.error?.param === "name" ? create.error : null, nameInput);
  return (
    <>
      <Crumbs />
      <PageHeader title="New event type" />
      <form className="card form" onSubmit={submit} noValidate>
        {create.error && param !== "name" ? <ErrorNotice error={create.error} /> : null}
        <Field
          label="Name"
          hint="Permanent. Lowercase letters, digits, dots and underscores, like invoice.paid."
          error={param === "name" ? create.error?.message : undefined}
        >
          {(props) => (
            <input
              {...props}
              ref={nameInput}
              required
              autoComplete="off"
              spellCheck={false}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <DescriptionField value={description} onChange={setDescription} />
        <SchemaEditor value={schemaText} onChange={setSchemaText} />
        {problem ? (
          <p className="field-error" role="alert">
            {problem}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={create.busy || !name.trim()}>
            {create.busy ? "Creating…" : "Create event type"}
          </button>
          <Link href="/dashboard/event-types">Cancel</Link>
        </div>
      </form>
    </>
  );
}

export function EditEventType({ name }: { name: string }) {
  const type = useResource(() => api.get<EventType>(`/v3/event-types/${encodeURIComponent(name)}`), [name]);
  if (!type.data)
    return (
      <>
        <Crumbs />
        {type.error ? <ErrorNotice error={type.error} onRetry={type.reload} /> : <Loading />}
      </>
    );
  return <EditForm key={type.data.name} type={type.data} onSaved={type.reload} />;
}

function EditForm({ type, onSaved }: { type: EventType; onSaved: () => void }) {
  const [description, setDescription] = useState(type.description);
  const [schemaText, setSchemaText] = useState(type.schema ? JSON.stringify(type.schema, null, 2) : "");
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const path = `/v3/event-types/${encodeURIComponent(type.name)}`;
  const save = useAction(async (schema: Record<string, unknown> | null) => {
    await api.post<EventType>(path, { description, schema });
    forgetEventTypes();
    setDone("Saved.");
    onSaved();
  });
  const archive = useAction(async () => {
    await api.post<EventType>(`${path}/${type.archived ? "unarchive" : "archive"}`);
    forgetEventTypes();
    setDone(type.archived ? "Unarchived: it accepts events again." : "Archived: it accepts no new events.");
    onSaved();
  });
  const descriptionInput = useRef<HTMLTextAreaElement>(null);
  useFocusOnFieldError(save.error?.param === "description" ? save.error : null, descriptionInput);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDone(null);
    const send = schemaToSend(schemaText);
    setProblem("problem" in send ? send.problem : null);
    if (!("problem" in send)) void save.run(send.schema);
  };
  return (
    <>
      <Crumbs />
      <PageHeader
        title={
          <>
            <span className="mono">{type.name}</span>{" "}
            {type.archived ? <span className="badge badge-dropped">archived</span> : null}
          </>
        }
      >
        <button
          type="button"
          className="button-secondary"
          disabled={archive.busy}
          onClick={() => void archive.run()}
        >
          {type.archived ? "Unarchive" : "Archive"}
        </button>
      </PageHeader>
      <p className="muted">
        Created <Time value={type.created_at} />, last changed <Time value={type.updated_at} />.
      </p>
      <p role="status" className={done ? "notice notice-ok" : undefined}>
        {done}
      </p>
      <ErrorNotice error={archive.error} />
      <form className="card form" onSubmit={submit} noValidate>
        {save.error && save.error.param !== "description" ? <ErrorNotice error={save.error} /> : null}
        <DescriptionField
          value={description}
          onChange={setDescription}
          inputRef={descriptionInput}
          error={save.error?.param === "description" ? save.error.message : undefined}
        />
        <SchemaEditor value={schemaText} onChange={setSchemaText} />
        {problem ? (
          <p className="field-error" role="alert">
            {problem}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={save.busy}>
            {save.busy ? "Saving…" : "Save changes"}
          </button>
        </div>
      </form>
    </>
  );
}

function DescriptionField({
  value,
  onChange,
  error,
  inputRef,
}: {
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
  inputRef?: RefObject<HTMLTextAreaElement | null>;
}) {
  return (
    <Field label="Description" hint="What the event means, for your customers." error={error}>
      {(props) => (
        <textarea
          {...props}
          ref={inputRef}
          className="prose-input"
          rows={3}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/**
 * An error about one field shows at that field; focus moves there, so a screen reader reads the
 * field with its error (tied to it by aria-describedby) and the keyboard is where the fix goes.
 */
function useFocusOnFieldError(error: unknown, field: RefObject<HTMLElement | null>) {
  useEffect(() => {
    if (error) field.current?.focus();
  }, [error, field]);
}

function Crumbs() {
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      <Link href="/dashboard/event-types">Event types</Link>
    </nav>
  );
}
