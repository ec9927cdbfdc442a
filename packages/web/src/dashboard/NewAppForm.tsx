import type { App } from "@herald/sdk/types";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { Field } from "../ui/Field.tsx";
import { useAction } from "../ui/hooks.ts";
import { ErrorNotice } from "../ui/Notice.tsx";

/** Create an app: a name, and optionally the uid your own system knows this customer by. */
export function NewAppForm({ onCreated, onCancel }: { onCreated: (app: App) => void; onCancel: () => void }) {
  const [uid, setUid] = useState("");
  const [name, setName] = useState("");
  const create = useAction(async () => {
    const app = await api.post<App>("/v3/apps", {
      name: name.trim(),
      ...(uid.trim() ? { uid: uid.trim() } : {}),
    });
    onCreated(app);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  const param = create.error?.param;
  // An error about a field moves focus there, so its message (in the field's description) is read.
  const nameInput = useRef<HTMLInputElement>(null);
  const uidInput = useRef<HTMLInputElement>(null);
  const error = create.error;
  useEffect(() => {
    if (error?.param === "name") nameInput.current?.focus();
    if (error?.param === "uid") uidInput.current?.focus();
  }, [error]);
  // An error about one field shows at that field; any other above the form.
  const fieldError = (field: string) => (param === field ? create.error?.message : undefined);
  return (
    <form onSubmit={submit} noValidate>
      {create.error && param !== "uid" && param !== "name" ? <ErrorNotice error={create.error} /> : null}
      <Field label="Name" hint="How you and your customer recognise it." error={fieldError("name")}>
        {(props) => (
          <input
            {...props}
            ref={nameInput}
            required
            autoComplete="off"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <Field
        label="UID (optional)"
        hint="Your own id for this customer; the API then accepts it wherever an app id goes."
        error={fieldError("uid")}
      >
        {(props) => (
          <input
            {...props}
            ref={uidInput}
            autoComplete="off"
            spellCheck={false}
            value={uid}
            onChange={(e) => setUid(e.target.value)}
          />
        )}
      </Field>
      <div className="actions">
        <button type="button" className="button-secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={create.busy}>
          {create.busy ? "Creating…" : "Create app"}
        </button>
      </div>
    </form>
  );
}
