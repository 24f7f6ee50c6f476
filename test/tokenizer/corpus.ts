// A deterministic corpus of >= 1,000 varied strings for comparing tokenizers: code, CJK, emoji, mixed scripts,
// whitespace runs, digits, contractions, special-token text. Built from fragments with a seeded PRNG.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FRAGMENTS: string[] = [
  // English prose and contractions
  'Hello, world!', 'The quick brown fox jumps over the lazy dog.', "I'm sure you'll see it's fine", "THEY'RE WE'VE I'D",
  "don't", "can't won't shouldn't", 'Once upon a time, there was a little girl named Lily.', 'e.g. i.e. etc...',
  'Mr. Smith & Co. (est. 1999)', 'hello', 'HELLO', 'HeLLo WoRLD', 'antidisestablishmentarianism',
  // code
  'def fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n', 'for (let i = 0; i < 10; i++) { console.log(i); }',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }', 'SELECT * FROM users WHERE id = 7;',
  'const x = {a: 1, "b": [2, 3]};', '    if x:\n        pass', '\tindented\twith\ttabs', 'fn main() -> Result<(), Box<dyn Error>> {}',
  '<div class="row">text</div>', 'x += y ** 2 // 3 % 4', '$HOME/.config && echo $PATH | grep -v ~', '@decorator\n@property',
  '```python\nprint("hi")\n```', 'a_b_c__d___e', 'camelCaseIdentifier', 'SCREAMING_SNAKE_CASE', '0x1F600 0b1010 1e-9',
  // digits
  '1', '12', '123', '1234', '12345', '123456789', '3.14159', '1,000,000', '2024-06-13', '10:05', '৪২', '٣٤٥', '①②③', 'Ⅻ',
  // CJK and other scripts
  '日本語のテキストです。', '中文字符测试，你好世界！', '한국어 텍스트 입니다', 'こんにちは世界', '漢字とカタカナとひらがな',
  'Привет, мир!', 'Ελληνικά γράμματα', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया', 'สวัสดีชาวโลก', 'ქართული',
  'Äpfel Ökonomie Übermaß straße', 'café naïve résumé coöperate', 'Føroyskt Íslenska', 'İstanbul ılık', 'Ǆ ǅ ǆ',
  'ﬁ ﬂ ﬀ', 'Ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ', 'ℌ𝔢𝔩𝔩𝔬 𝕎𝕠𝕣𝕝𝕕', 'a\u0301 e\u0308 n\u0303', '\u200b\u200c\u200d', '\u00a0nbsp\u00a0',
  // emoji
  '🦙', '🔥🔥🔥', '👨‍👩‍👧‍👦', '🏳️‍🌈', '👍🏽', '😀 😃 😄', '❤️', '🇯🇵🇺🇸', '☃︎', '✓ ✗ → ← ↑',
  // whitespace runs
  ' ', '  ', '   ', '\n', '\n\n', '\n\n\n', '\r\n', '\t', ' \t \n ', '          ', '\n   \n', '  leading', 'trailing  ',
  // punctuation and symbols
  '!!!', '???', '...', '—–-', '«quotes» “curly” ‘single’', '(parens) [brackets] {braces}', '#$%^&*', '+=-', '~`|\\',
  '© ® ™ § ¶ µ ½ ¼', '°C ±5', "'s 't 're 've 'm 'll 'd", "''", '""',
];

const SPECIAL_FRAGMENTS: string[] = [
  '<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>', '<|start_header_id|>', '<|end_header_id|>', '<|im_start|>',
  '<|im_end|>', '<|endoftext|>', '<think>', '</think>', '<bos>', '<eos>', '<start_of_turn>', '<end_of_turn>', '<pad>',
  '<s>', '</s>', '<unk>', '<tool_call>',
];

export function buildCorpus(n = 1200, seed = 1234): string[] {
  const rnd = mulberry32(seed);
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
  const out = new Set<string>();
  for (const f of FRAGMENTS) out.add(f);
  for (const f of SPECIAL_FRAGMENTS) out.add(f);
  const joiners = ['', ' ', '  ', '\n', ' \n', '\t', '\n\n', ', ', '. '];
  while (out.size < n) {
    const k = 1 + Math.floor(rnd() * 5);
    let s = '';
    for (let i = 0; i < k; i++) {
      const r = rnd();
      const frag = r < 0.12 ? pick(SPECIAL_FRAGMENTS) : pick(FRAGMENTS);
      s += (i > 0 ? pick(joiners) : '') + frag;
    }
    if (rnd() < 0.1) s = ' ' + s;
    if (rnd() < 0.1) s = s + pick([' ', '\n', '  ']);
    out.add(s);
  }
  return [...out];
}
