/** Descriptions shared by every kind. */
export const LABELS_DOC = 'Free labels (string -> string).';
