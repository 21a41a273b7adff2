// Stylesheets imported for their effect: scripts/build.mjs bundles them into the console's stylesheet.
declare module '*.css';
