/**
 * The linear layers LoRA may adapt (the engine's LORA_TARGETS; a test keeps the two lists equal). In a file of its
 * own, without zod, so that the renderer can import the list without bundling zod (whose eval probe the page's
 * Content-Security-Policy reports as a console error).
 */
export const LORA_TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
