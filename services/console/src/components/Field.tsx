/** A one-line text field of a form, named by `label` (what screen readers and the tests find it by). */
export function Field({
  label,
  value,
  onChange,
  placeholder,
  wide = false,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
  /** Takes the room left on its line (subjects, JSON). */
  wide?: boolean;
}) {
  return (
    <input
      aria-label={label}
      placeholder={placeholder}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      {...(wide ? { className: 'wide' } : {})}
    />
  );
}
