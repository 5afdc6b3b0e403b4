/**
 * Hugging Face causal LMs exported to ONNX with a key/value cache (onnxruntime-node rollouts), one file per piece as
 * the tfjs model (the graph builder is src/core/util/onnxGraph.ts): linear.ts · rmsNorm.ts · rope.ts · attention.ts · mlp.ts · export.ts.
 */
export { exportLlmOnnx, exportLlmOnnxExternal, llmOnnxTensors, LLM_ONNX_OPSET } from './export';
export { ropeFeeds } from './rope';
export { cacheBias } from './attention';
