// Vite's ?raw imports: a file's text as a string.
declare module "*.md?raw" {
  const text: string;
  export default text;
}
