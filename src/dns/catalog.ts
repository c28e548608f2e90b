/**
 * Built-in catalog of AI services and the DNS names they use. A name matches a domain when it
 * equals it or ends with "." + it. Extend it with dns.aiServices in the config.
 */
export interface AiService {
  name: string;
  domains: string[];
}

export const BUILTIN_AI_SERVICES: AiService[] = [
  { name: 'OpenAI', domains: ['openai.com', 'api.openai.com', 'oaiusercontent.com', 'oaistatic.com', 'openai.azure.com'] },
  { name: 'ChatGPT', domains: ['chatgpt.com', 'chat.openai.com', 'chatgpt.livekit.cloud'] },
  { name: 'Anthropic Claude', domains: ['anthropic.com', 'claude.ai', 'claude.com', 'claudeusercontent.com'] },
  { name: 'Google Gemini', domains: ['gemini.google.com', 'generativelanguage.googleapis.com', 'aistudio.google.com', 'bard.google.com', 'notebooklm.google.com', 'aiplatform.googleapis.com'] },
  { name: 'Microsoft Copilot', domains: ['copilot.microsoft.com', 'copilot.cloud.microsoft', 'sydney.bing.com', 'edgeservices.bing.com'] },
  { name: 'GitHub Copilot', domains: ['githubcopilot.com', 'copilot-proxy.githubusercontent.com', 'api.githubcopilot.com'] },
  { name: 'Mistral', domains: ['mistral.ai', 'chat.mistral.ai', 'api.mistral.ai'] },
  { name: 'Perplexity', domains: ['perplexity.ai', 'pplx.ai'] },
  { name: 'DeepSeek', domains: ['deepseek.com', 'chat.deepseek.com', 'api.deepseek.com'] },
  { name: 'xAI Grok', domains: ['x.ai', 'grok.com', 'api.x.ai'] },
  { name: 'Meta AI', domains: ['meta.ai'] },
  { name: 'Cohere', domains: ['cohere.com', 'cohere.ai', 'api.cohere.ai'] },
  { name: 'Hugging Face', domains: ['huggingface.co', 'hf.co'] },
  { name: 'Poe', domains: ['poe.com'] },
  { name: 'Character.AI', domains: ['character.ai'] },
  { name: 'You.com', domains: ['you.com'] },
  { name: 'Groq', domains: ['groq.com', 'api.groq.com'] },
  { name: 'Together AI', domains: ['together.ai', 'together.xyz'] },
  { name: 'Replicate', domains: ['replicate.com'] },
  { name: 'OpenRouter', domains: ['openrouter.ai'] },
  { name: 'Qwen', domains: ['qwen.ai', 'chat.qwen.ai', 'dashscope.aliyuncs.com'] },
  { name: 'Moonshot Kimi', domains: ['kimi.com', 'moonshot.cn', 'kimi.moonshot.cn'] },
  { name: 'Cursor', domains: ['cursor.sh', 'cursor.com', 'api2.cursor.sh'] },
  { name: 'Codeium Windsurf', domains: ['codeium.com', 'windsurf.com'] },
  { name: 'Amazon Bedrock', domains: ['bedrock-runtime.us-east-1.amazonaws.com', 'bedrock-runtime.us-west-2.amazonaws.com', 'bedrock-runtime.eu-central-1.amazonaws.com'] },
  { name: 'Jasper', domains: ['jasper.ai'] },
  { name: 'Writesonic', domains: ['writesonic.com'] },
  { name: 'Phind', domains: ['phind.com'] },
];

/** Suffix lookup over the catalog: walks the labels of a name, most specific first. */
export class AiCatalog {
  private readonly byDomain = new Map<string, string>();

  constructor(extra: AiService[] = []) {
    for (const s of [...BUILTIN_AI_SERVICES, ...extra]) for (const d of s.domains) this.byDomain.set(d.toLowerCase(), s.name);
  }

  /** The service a name belongs to, or undefined. */
  match(name: string): string | undefined {
    let n = name.toLowerCase().replace(/\.$/, '');
    for (;;) {
      const hit = this.byDomain.get(n);
      if (hit) return hit;
      const dot = n.indexOf('.');
      if (dot < 0) return undefined;
      n = n.slice(dot + 1);
    }
  }

  get size(): number {
    return this.byDomain.size;
  }
}
