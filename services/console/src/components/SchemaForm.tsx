import type { Draft, FormErrors, FormField } from '../model/schema-form';
import { draftAt } from '../model/schema-form';

/** The fields of `field` (see model/schema-form.ts), each with its error under it. */
export function SchemaForm({
  field,
  draft,
  errors,
  onChange,
}: {
  field: FormField;
  draft: Draft;
  errors: FormErrors;
  onChange: (path: string, value: Draft) => void;
}) {
  if (field.kind === 'object')
    return (
      <fieldset className="schema-object" data-field={field.path}>
        {field.path !== '' && <legend>{label(field)}</legend>}
        {field.fields.length === 0 && <p className="muted">No input fields.</p>}
        {field.fields.map((inner) => (
          <SchemaForm key={inner.path} field={inner} draft={draft} errors={errors} onChange={onChange} />
        ))}
      </fieldset>
    );
  const value = draftAt(draft, field.path);
  const text = typeof value === 'string' ? value : '';
  const id = `field-${field.path || 'input'}`;
  const error = errors[field.path];
  const common = {
    id,
    name: field.path || 'input',
    'aria-invalid': error !== undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
  };
  let control;
  switch (field.kind) {
    case 'boolean':
      control = (
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(field.path, e.target.checked)}
        />
      );
      break;
    case 'enum':
      control = (
        <select {...common} value={text} onChange={(e) => onChange(field.path, e.target.value)}>
          <option value="">{field.required ? 'choose…' : '(none)'}</option>
          {field.options.map((option, index) => (
            <option key={index} value={String(index)}>
              {typeof option === 'string' ? option : JSON.stringify(option)}
            </option>
          ))}
        </select>
      );
      break;
    case 'json':
      control = (
        <textarea
          {...common}
          className="mono"
          rows={4}
          placeholder='JSON, e.g. {} or "text"'
          value={text}
          onChange={(e) => onChange(field.path, e.target.value)}
        />
      );
      break;
    default:
      control = (
        <input
          {...common}
          type="text"
          inputMode={field.kind === 'number' ? 'decimal' : undefined}
          value={text}
          onChange={(e) => onChange(field.path, e.target.value)}
        />
      );
  }
  return (
    <div className="schema-field">
      <label htmlFor={id}>
        {label(field)}
        {field.required && (
          <span className="required" aria-label="required">
            {' '}
            *
          </span>
        )}
        <span className="muted"> {hint(field)}</span>
      </label>
      {control}
      {field.description && <small className="muted">{field.description}</small>}
      {error && (
        <small className="error" id={`${id}-error`} data-error-for={field.path || 'input'}>
          {error}
        </small>
      )}
    </div>
  );
}

const label = (field: FormField) => (field.path === '' ? 'Input' : field.label);

function hint(field: FormField): string {
  switch (field.kind) {
    case 'number':
      return field.integer ? 'integer' : 'number';
    case 'json':
      return 'JSON';
    case 'boolean':
      return '';
    default:
      return field.kind;
  }
}
