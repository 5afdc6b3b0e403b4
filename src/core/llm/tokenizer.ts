/**
 * A Hugging Face tokenizer (`tokenizer.json` + `tokenizer_config.json`) and its chat template, through the two
 * packages Hugging Face keeps for exactly this (both pure JS): `@huggingface/tokenizers` (normalizers, pre-tokenizers,
 * byte-level BPE, added/special tokens, post-processors, decoders) and `@huggingface/jinja` (the chat-template
 * language). This file only adapts them to the lab: what a chat template is given (the variables Transformers'
 * `apply_chat_template` passes) and the checks a folder must pass.
 *
 * As in Transformers, a rendered chat template is encoded without adding special tokens (the template already
 * holds them).
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { Template } from '@huggingface/jinja';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | string;
  content: string;
}

type Json = Record<string, unknown>;

export class TokenizerFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenizerFolderError';
  }
}

/** A special-token entry of tokenizer_config.json: a string or an AddedToken object `{content, …}`. */
function tokenString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return null;
}

export class HfTokenizer {
  private readonly tok: Tokenizer;
  private readonly template: Template | null;
  readonly chatTemplateSource: string | null;
  /** Special-token strings by role, as tokenizer_config.json names them (null when unset). */
  readonly specialTokens: { bos: string | null; eos: string | null; pad: string | null; unk: string | null };
  /** Largest token id the tokenizer can produce (vocabulary and added tokens). */
  readonly maxTokenId: number;

  /**
   * `chatTemplate` overrides tokenizer_config.json's `chat_template` (newer folders keep it in chat_template.jinja).
   */
  constructor(tokenizerJson: unknown, tokenizerConfig: unknown, chatTemplate?: string | null) {
    if (typeof tokenizerJson !== 'object' || tokenizerJson === null)
      throw new TokenizerFolderError('tokenizer.json: expected a JSON object');
    const cfg = (tokenizerConfig ?? {}) as Json;
    const model = (tokenizerJson as Json).model as Json | undefined;
    if (!model || typeof model !== 'object')
      throw new TokenizerFolderError('tokenizer.json: no "model" section — not a Hugging Face fast tokenizer file');
    try {
      this.tok = new Tokenizer(tokenizerJson, cfg);
    } catch (e) {
      throw new TokenizerFolderError(`tokenizer.json: could not be loaded (${(e as Error).message})`);
    }
    this.specialTokens = {
      bos: tokenString(cfg.bos_token),
      eos: tokenString(cfg.eos_token),
      pad: tokenString(cfg.pad_token),
      unk: tokenString(cfg.unk_token),
    };
    let src: string | null = chatTemplate ?? null;
    if (src === null) {
      const ct = cfg.chat_template;
      if (typeof ct === 'string') src = ct;
      else if (Array.isArray(ct)) {
        // A list of named templates: Transformers uses the one named "default".
        const d = ct.find((t) => (t as Json)?.name === 'default') as Json | undefined;
        src = typeof d?.template === 'string' ? d.template : null;
      }
    }
    this.chatTemplateSource = src;
    try {
      this.template = src === null ? null : new Template(src);
    } catch (e) {
      throw new TokenizerFolderError(`chat template: does not parse (${(e as Error).message})`);
    }
    let max = -1;
    const vocab = model.vocab;
    if (Array.isArray(vocab)) max = vocab.length - 1;
    else if (vocab && typeof vocab === 'object') {
      for (const id of Object.values(vocab as Record<string, number>)) if (id > max) max = id;
    }
    for (const t of ((tokenizerJson as Json).added_tokens ?? []) as Array<{ id: number }>) if (t.id > max) max = t.id;
    this.maxTokenId = max;
  }

  /** Token ids of `text`; `addSpecialTokens` applies the post-processor (e.g. a leading <bos>), as in Transformers. */
  encode(text: string, opts: { addSpecialTokens?: boolean } = {}): number[] {
    return this.tok.encode(text, { add_special_tokens: opts.addSpecialTokens ?? false }).ids;
  }

  decode(ids: readonly number[], opts: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return ''; // the package refuses an empty list; Transformers returns ""
    return this.tok.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? false });
  }

  /** The id of one token string (a special token, or a vocabulary entry), or undefined. */
  tokenId(token: string): number | undefined {
    return this.tok.token_to_id(token);
  }

  get hasChatTemplate(): boolean {
    return this.template !== null;
  }

  /**
   * Render the chat template with the variables Transformers passes (messages, add_generation_prompt, special tokens)
   * plus `variables` (what apply_chat_template's extra keyword arguments are, e.g. Qwen3's enable_thinking).
   */
  renderChat(messages: readonly ChatMessage[], opts: { addGenerationPrompt?: boolean; variables?: Record<string, unknown> } = {}): string {
    if (!this.template)
      throw new TokenizerFolderError(
        'tokenizer_config.json has no chat_template (and there is no chat_template.jinja); use a chat (instruct) checkpoint or add a template',
      );
    const s = this.specialTokens;
    return this.template.render({
      ...opts.variables,
      messages: messages.map((m) => ({ ...m })),
      add_generation_prompt: opts.addGenerationPrompt ?? false,
      bos_token: s.bos ?? '',
      eos_token: s.eos ?? '',
      pad_token: s.pad ?? '',
      unk_token: s.unk ?? '',
    });
  }

  /** Token ids of the rendered chat (no special tokens added on top: the template holds them). */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    opts: { addGenerationPrompt?: boolean; variables?: Record<string, unknown> } = {},
  ): number[] {
    return this.encode(this.renderChat(messages, opts), { addSpecialTokens: false });
  }
}

/** Refuse a tokenizer that can produce ids the model has no embedding row for. */
export function checkTokenizerFitsVocab(tok: HfTokenizer, vocabSize: number): void {
  if (tok.maxTokenId >= vocabSize) {
    throw new TokenizerFolderError(
      `tokenizer.json has token ids up to ${tok.maxTokenId} but config.json vocab_size is ${vocabSize}; the tokenizer does not belong to this model (use the tokenizer files saved with it)`,
    );
  }
}
