// Gemini addresses models as resource names: "models/x", or "tunedModels/x" for tuned ones.

export function geminiModelPath(model: string, method: string): string {
  const resource = model.includes('/') ? model : `models/${model}`;
  return `/${resource.split('/').map(encodeURIComponent).join('/')}:${method}`;
}

export function geminiModelResource(model: string): string {
  return model.includes('/') ? model : `models/${model}`;
}
