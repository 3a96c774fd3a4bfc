// wrangler (and the Cloudflare Vite plugin) import `.sql` files as Text modules: the
// file's contents as a string (coordinator/store/schema.ts embeds the D1 migrations so).
declare module "*.sql" {
  const text: string;
  export default text;
}
