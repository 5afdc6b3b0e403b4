/**
 * The agent: a small decoder-only transformer LM policy (tfjs), its tokenizer, rollout engines and the batched
 * multi-turn rollout. Pure core code; onnxruntime-node and backend set-up are injected from src/main/compute.
 *
 * Quick reference (what the trainer calls):
 *
 *   Tokenizer
 *     const tok = fitTestbedTokenizer({ envs: ['sokoban'] })   // or Tokenizer.fit(texts): deterministic
 *                                                       // word/symbol vocab; ids 0..7 are
 *                                                       // <pad> <bos> <eos> <unk> <think> </think> <action> </action>
 *     tok.encode(text) → number[]; tok.decode(ids) → string (normalised text round-trips)
 *     tok.toJSON() / Tokenizer.fromJSON(json)
 *
 *   Model
 *     const cfg = resolveModelConfig({ size: 'nano' } | { size: 'custom', dModel, nLayers, nHeads, dFF, maxSeqLen }, tok.size)
 *     const model = PolicyModel.create(cfg, rng, 'policy')   // seeded from our Rng; 'ref' for a reference copy
 *     model.forward(ids [N,T] int32) → logits [N,T,V]
 *     model.tokenLogProbs(rows: {promptIds, responseIds}[], {temperature}) → {logProbs, entropy, mask} each [N,R]
 *         differentiable: use inside tf.variableGrads(() => loss, model.trainableVariables())
 *     model.getWeights() / model.setWeights(w: ModelWeights)   // host Float32Arrays keyed by tensor name
 *     serializeModel(weights, tok, meta) → {'model.json','weights.bin','tokenizer.json'}; deserializeModel(files)
 *         (SHA-256 checked; pure-JS sha256Hex)
 *
 *   Engines (RolloutEngine): setWeights(w) · generate(promptIds[][], SamplingOptions, rng) → {tokens, logProbs, finish}
 *     · logProbs(rows, temperature) → number[][] (forward only: old / ref log-probs, mismatch)
 *     new TfjsRolloutEngine(model)      — here; full recompute, the oracle
 *     onnxruntime engine (KV cache)     — src/main/compute (createOrtEngine), injected via TrainerDeps.compute
 *     mismatchStats(a, b)               — max / mean |Δ log-prob| for the mismatch/* metrics
 *
 *   Rollout
 *     runRollout({engine, tokenizer, makeEnv, buildPrompt, tasks, groupSize, sampling, maxSeqLen, rng, uidPrefix})
 *       → {rows: TurnRow[], trajectories: TrajectoryInfo[], stats}
 */
export * from './tokenizer';
export * from './model';
export * from './sampling';
export * from './engine';
export * from './tfjsEngine';
export * from './checkpoint';
export * from './rollout';
export * from './policy';
export * from './mismatch';
export { sha256Hex } from './sha256';
export * from './onnxExport';
export * from './corpus';
